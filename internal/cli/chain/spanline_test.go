package chain

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"
)

// spanLineSeeds are lines at the edges of what decodeSpanLineFast takes.
var spanLineSeeds = []string{
	`{"name":"a","kind":"b","attributes":{},"status_code":"","status_description":"","start_time_ns":1,"end_time_ns":"2","trace_id":"t","span_id":"s"}`,
	` { "start_time_ns" : "0" , "end_time_ns" : 0 } trailing bytes`,
	`{"start_time_ns":1,"end_time_ns":2,"attributes":{"a":[1,-0,0.5,1e3,-2E-2,true,false,null,"ü",{"b":{}}],"a":"dup"}}`,
	`{"start_time_ns":1,"end_time_ns":2,"Name":"case"}`,
	`{"start_time_ns":1,"end_time_ns":2,"name":"x","name":"twice"}`,
	`{"start_time_ns":1,"end_time_ns":2,"attributes":{"a":1},"attributes":{"b":2}}`,
	`{"start_time_ns":1,"end_time_ns":2,"name":"esc\"aped\n"}`,
	`{"start_time_ns":1,"end_time_ns":2,"name":"bad \xff utf-8"}`,
	`{"start_time_ns":1,"end_time_ns":2,"name":null,"attributes":null}`,
	`{"start_time_ns":1,"end_time_ns":2,"attributes":{"n":1e400}}`,
	`{"start_time_ns":1,"end_time_ns":2,"attributes":{"n":01}}`,
	`{"start_time_ns":"+5","end_time_ns":"-0"}`,
	`{"start_time_ns":1.0,"end_time_ns":2}`,
	`{"start_time_ns":-1,"end_time_ns":2}`,
	`{"start_time_ns":99999999999999999999,"end_time_ns":2}`,
	`{"start_time_ns":1}`,
	`{"start_time_ns":1,"end_time_ns":2,"colour":"red"}`,
	`{"start_time_ns":1,"end_time_ns":2,}`,
	`{"start_time_ns":1,"end_time_ns":2,"attributes":{"a":[1,]}}`,
	`{"start_time_ns":1,"end_time_ns":2,"attributes":{"a":tru}}`,
	`{}`, `[]`, `null`, `"x"`, `{"start_time_ns":1,"end_time_ns":2`,
}

// checkSpanLineAgrees fails unless decodeSpanLine gives what encoding/json gives for line:
// the same body, or an error with the same message. It reports whether the fast path took
// the line.
func checkSpanLineAgrees(t *testing.T, line []byte) bool {
	t.Helper()
	fast, took := decodeSpanLineFast(line)
	want, wantErr := decodeSpanLineJSON(line)
	got, err := decodeSpanLine(line)
	if fmt.Sprint(err) != fmt.Sprint(wantErr) || !reflect.DeepEqual(got, want) || (took && !reflect.DeepEqual(fast, want)) {
		t.Fatalf("line %q:\n got %#v, %v (fast path: %v)\nwant %#v, %v", line, got, err, took, want, wantErr)
	}
	return took
}

// TestDecodeSpanLineFastAgrees holds the scanner to encoding/json on edge cases, on the
// lines the benchmarks seal, and on thousands of random edits of them.
func TestDecodeSpanLineFastAgrees(t *testing.T) {
	for _, line := range spanLineSeeds {
		checkSpanLineAgrees(t, []byte(line))
	}
	lines := bytes.Split(bytes.TrimSpace(genAISpanLines(20)), []byte("\n"))
	for _, line := range lines {
		if !checkSpanLineAgrees(t, line) {
			t.Fatalf("the fast path declined a usual line: %s", line)
		}
	}
	const alphabet = "{}[]\",:\\ \t0123456789eE.-+truefalsnameattributesü\xff"
	r := rand.New(rand.NewPCG(22, 2))
	took := 0
	for range 20000 {
		line := bytes.Clone(lines[r.IntN(len(lines))])
		for range 1 + r.IntN(3) {
			at := r.IntN(len(line) + 1)
			c := alphabet[r.IntN(len(alphabet))]
			switch r.IntN(3) {
			case 0:
				line = append(line[:at], append([]byte{c}, line[at:]...)...)
			case 1:
				if at < len(line) {
					line = append(line[:at], line[at+1:]...)
				}
			default:
				if at < len(line) {
					line[at] = c
				}
			}
		}
		if checkSpanLineAgrees(t, line) {
			took++
		}
	}
	if took < 1000 {
		t.Fatalf("the fast path took %d of the edited lines: they no longer test it", took)
	}
}

func FuzzDecodeSpanLineFastAgrees(f *testing.F) {
	for _, line := range spanLineSeeds {
		f.Add([]byte(line))
	}
	f.Add(bytes.TrimSpace(genAISpanLines(1)))
	f.Fuzz(func(t *testing.T, line []byte) {
		checkSpanLineAgrees(t, line)
	})
}
