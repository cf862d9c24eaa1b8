package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"runtime"

	"github.com/spf13/cobra"

	"github.com/cairn-dev/cairn/internal/cli/cmdutil"
	"github.com/cairn-dev/cairn/internal/store"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

// sealBatchSize is how many spans `cairn chain seal` seals in one transaction.
const sealBatchSize = 1000

func newChainSealCommand() *cobra.Command {
	var o cmdutil.ChainOptions
	var file string
	cmd := &cobra.Command{
		Use:   "seal --file SPANS.jsonl",
		Short: "Seal spans from a JSON Lines file (- for standard input) into the chain",
		Long: `Seal spans into the chain, one JSON object a line with the members of the canonical
body: name, kind, attributes, status_code, status_description, start_time_ns, end_time_ns
(decimal nanoseconds, as strings or numbers), trace_id and span_id. Spans are sealed in
batches of 1,000, each batch in one transaction. The secret is required.`,
		Args: cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if file == "" {
				return cmdutil.UsageError{Err: fmt.Errorf("--file is required (- reads standard input)")}
			}
			in, closeIn, err := cmdutil.OpenInput(cmd.InOrStdin(), file)
			if err != nil {
				return err
			}
			defer closeIn()
			s, err := o.Create()
			if err != nil {
				return err
			}
			defer func() { _ = s.Close() }()
			n, last, err := sealLines(cmd.Context(), s, in)
			if err != nil {
				return err
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "sealed %d spans; chain head seq %d %s\n", n, last.Seq, last.HMACHash)
			return err
		},
	}
	o.AddFlags(cmd)
	cmd.Flags().StringVarP(&file, "file", "f", "", "JSON Lines file of spans, - for standard input")
	return cmd
}

// lineBatch is up to sealBatchSize spans of the input, read and then parsed in the
// background while earlier batches are sealed.
type lineBatch struct {
	text   []byte // the batch's lines, back to back
	ends   []int  // line i of the batch is text[ends[i-1]:ends[i]]
	lineNo []int  // lineNo[i] is line i's number in the input, from 1
	last   int    // the number of the input's last line read into the batch, blank or not

	readErr error // reading the input failed after the batch's lines

	bodies []protocol.SpanBody // set by parse
	err    error               // the first bad line's error, else readErr
	done   chan struct{}       // closed when bodies and err are set
}

// parse decodes the batch's lines into bodies, stopping at the first bad one.
func (b *lineBatch) parse() {
	defer close(b.done)
	b.bodies = make([]protocol.SpanBody, len(b.ends))
	start := 0
	for i, end := range b.ends {
		body, err := decodeSpanLine(b.text[start:end])
		if err != nil {
			b.err = fmt.Errorf("%w: line %d: %w", protocol.ErrMalformed, b.lineNo[i], err)
			return
		}
		b.bodies[i], start = body, end
	}
	b.err = b.readErr
}

// sealLines seals every span of in, in batches of sealBatchSize, and returns the count and
// the last entry. It is a pipeline: one goroutine reads the lines, all cores parse
// batches, the next batch's entries are prepared (store.Prepare) and the store seals the
// batches in order, so reading, parsing and preparing overlap sealing. A bad line stops it before its batch; the batches before it are sealed,
// as when it sealed each batch before reading the next.
func sealLines(ctx context.Context, s *store.Store, in io.Reader) (int, *protocol.Entry, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel() // stops the reader and the parsers if sealing stops early
	workers := runtime.GOMAXPROCS(0)
	batches := make(chan *lineBatch, workers+1) // in input order, at most this many ahead
	toParse := make(chan *lineBatch, workers+1)
	go readBatches(ctx, in, batches, toParse)
	for range workers {
		go func() {
			for b := range toParse {
				b.parse()
			}
		}()
	}
	ready := make(chan preparedBatch) // unbuffered: one batch is prepared ahead of the one sealing
	go prepareBatches(ctx, s, batches, ready)
	var last *protocol.Entry
	sealed := 0
	for r := range ready {
		if r.err != nil {
			return sealed, last, r.err
		}
		if r.batch == nil {
			continue
		}
		entries, err := s.SealBatch(ctx, r.batch)
		if err != nil {
			return sealed, last, fmt.Errorf("seal spans up to line %d: %w", r.last, err)
		}
		sealed += len(entries)
		last = entries[len(entries)-1]
	}
	if err := ctx.Err(); err != nil {
		return sealed, last, err
	}
	if sealed == 0 {
		return 0, nil, fmt.Errorf("%w: no spans in the input", protocol.ErrMalformed)
	}
	return sealed, last, nil
}

// preparedBatch is a parsed lineBatch whose entries the store is preparing (batch, nil
// when it has no spans), or its error.
type preparedBatch struct {
	batch *store.Batch
	last  int // lineBatch.last
	err   error
}

// prepareBatches waits for each batch to be parsed, in order, and starts the store
// preparing its entries (store.Prepare) before handing it to ready, which it closes at the
// end; so the next batch's entries are made while the last one is written. It stops after
// a batch with an error.
func prepareBatches(ctx context.Context, s *store.Store, batches <-chan *lineBatch, ready chan<- preparedBatch) {
	defer close(ready)
	for b := range batches {
		select {
		case <-b.done:
		case <-ctx.Done():
			return
		}
		r := preparedBatch{last: b.last, err: b.err}
		if b.err == nil && len(b.bodies) > 0 {
			r.batch = s.Prepare(b.bodies)
		}
		select {
		case ready <- r:
		case <-ctx.Done():
			return
		}
		if b.err != nil {
			return
		}
	}
}

// readBatches reads in's lines into batches of sealBatchSize non-blank lines and sends
// each to batches, in order, and to toParse; it closes both at the end of the input. The
// last batch may hold fewer lines, or none; when reading fails, it carries the error,
// which parse reports unless one of its lines is bad.
func readBatches(ctx context.Context, in io.Reader, batches, toParse chan<- *lineBatch) {
	defer close(batches)
	defer close(toParse)
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 64<<10), protocol.MaxEntryBytes)
	newBatch := func() *lineBatch {
		return &lineBatch{text: make([]byte, 0, 1<<20), ends: make([]int, 0, sealBatchSize),
			lineNo: make([]int, 0, sealBatchSize), done: make(chan struct{})}
	}
	send := func(b *lineBatch) bool {
		for _, ch := range [...]chan<- *lineBatch{batches, toParse} {
			select {
			case ch <- b:
			case <-ctx.Done():
				return false
			}
		}
		return true
	}
	b, line := newBatch(), 0
	for sc.Scan() {
		line++
		b.last = line
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		b.text = append(b.text, sc.Bytes()...)
		b.ends, b.lineNo = append(b.ends, len(b.text)), append(b.lineNo, line)
		if len(b.ends) == sealBatchSize {
			if !send(b) {
				return
			}
			b = newBatch()
		}
	}
	if err := sc.Err(); err != nil {
		b.readErr = fmt.Errorf("read spans: %w", err)
	}
	send(b)
}
