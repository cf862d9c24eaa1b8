// Command mkspans writes gen_ai chat spans as JSON Lines, the input of
// `cairn chain seal --file` that the CLI benchmarks and `make bench-compare` use (the
// shape is genaispans.AppendLine's):
//
//	go run ./hack/mkspans -n 200000 > spans.jsonl
package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"

	"github.com/cairn-dev/cairn/internal/otlp/genaispans"
)

func main() {
	n := flag.Int("n", 200_000, "how many spans to write")
	flag.Parse()
	if err := write(*n); err != nil {
		fmt.Fprintln(os.Stderr, "mkspans:", err)
		os.Exit(1)
	}
}

// write writes spans 0 to n-1 to standard output.
func write(n int) error {
	w := bufio.NewWriterSize(os.Stdout, 1<<20)
	var line []byte
	for i := range n {
		line = genaispans.AppendLine(line[:0], i)
		if _, err := w.Write(line); err != nil {
			return err
		}
	}
	return w.Flush()
}
