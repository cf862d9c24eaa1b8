package chain

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

// chainSealOptions are `cairn chain seal`'s.
type chainSealOptions struct {
	cmdutil.ChainOptions
	cmdutil.NoCompletion
	file string
}

func newChainSealCommand() *cobra.Command {
	o := &chainSealOptions{}
	cmd := &cobra.Command{
		Use:   "seal --file SPANS.jsonl",
		Short: "Seal spans from a JSON Lines file (- for standard input) into the chain",
		Long: `Seal spans into the chain, one JSON object a line with the members of the canonical
body: name, kind, attributes, status_code, status_description, start_time_ns, end_time_ns
(decimal nanoseconds, as strings or numbers), trace_id and span_id. Spans are sealed in
batches of 1,000, each batch in one transaction. The secret is required.

A span is sealed once: a line whose trace_id and span_id the chain already holds with
the same content is skipped (counted as already sealed), and one it holds with other
content is refused and reported with its line number (exit 1, the other lines sealed).
So a seal that stopped, or ran twice, is finished by running it again.

On a terminal, progress is shown on standard error. Ctrl-C stops after the batch being
written: the command says which lines are sealed and exits 130.`,
		Args: cmdutil.NoArgs,
		Example: `  # Seal the spans of a JSON Lines file, the secret from the environment
  CAIRN_HMAC_SECRET=... cairn chain seal --db chain.db --file spans.jsonl

  # Seal spans from standard input
  otel-export | cairn chain seal --db chain.db --secret-file secret.hex -f -`,
		RunE: func(cmd *cobra.Command, args []string) error { return cmdutil.Run(cmd, args, o) },
	}
	o.AddFlags(cmd)
	cmd.Flags().StringVarP(&o.file, "file", "f", "", "JSON Lines file of spans, - for standard input")
	return cmd
}

// Validate requires --file.
func (o *chainSealOptions) Validate() error {
	if o.file == "" {
		return cmdutil.UsageError{Err: fmt.Errorf("--file is required (- reads standard input)")}
	}
	return nil
}

// Run seals the spans of the file into the chain, creating it when missing.
func (o *chainSealOptions) Run(cmd *cobra.Command) error {
	in, closeIn, err := cmdutil.OpenInput(cmd.InOrStdin(), o.file)
	if err != nil {
		return err
	}
	defer closeIn()
	s, err := o.Create()
	if err != nil {
		return err
	}
	defer func() { _ = s.Close() }()
	return runChainSeal(cmd, s, in, inputName(o.file), inputSize(in))
}

// lineBatch is up to sealBatchSize spans of the input, read and then parsed in the
// background while earlier batches are sealed.
type lineBatch struct {
	text   []byte // the batch's lines, back to back
	ends   []int  // line i of the batch is text[ends[i-1]:ends[i]]
	lineNo []int  // lineNo[i] is line i's number in the input, from 1
	last   int    // the number of the input's last line read into the batch, blank or not
	offset int64  // the input's bytes read through line last

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

// sealLines seals every span of in that the chain does not hold, as sealInput does, and
// returns the count sealed and the last entry sealed.
func sealLines(ctx context.Context, s *store.Store, in io.Reader) (int, *protocol.Entry, error) {
	t, err := sealInput(ctx, s, in, nil)
	return t.sealed, t.head, err
}

// sealInput seals the spans of in, in batches of sealBatchSize, each with
// store.SealBatchOnce, so that a span the chain holds is not sealed again, and returns what
// it did; progress, if not nil, is called after each batch. It is a pipeline: one goroutine
// reads the lines, all cores parse batches, the next batch's entries are prepared
// (store.Prepare) and the store seals the batches in order, so reading, parsing and
// preparing overlap sealing. A bad line stops it before its batch; the batches before it
// are sealed, as when it sealed each batch before reading the next.
//
// When ctx is cancelled, the batch being sealed is still committed (it takes
// milliseconds) and sealInput returns an error wrapping ctx's: the tally then says which
// lines are done.
func sealInput(ctx context.Context, s *store.Store, in io.Reader, progress func(*sealTally)) (*sealTally, error) {
	pipeline, cancel := context.WithCancel(ctx)
	defer cancel() // stops the reader and the parsers if sealing stops early
	workers := runtime.GOMAXPROCS(0)
	batches := make(chan *lineBatch, workers+1) // in input order, at most this many ahead
	toParse := make(chan *lineBatch, workers+1)
	go readBatches(pipeline, in, batches, toParse)
	for range workers {
		go func() {
			for b := range toParse {
				b.parse()
			}
		}()
	}
	ready := make(chan preparedBatch) // unbuffered: one batch is prepared ahead of the one sealing
	go prepareBatches(pipeline, s, batches, ready)
	t := &sealTally{}
	commit := context.WithoutCancel(ctx) // a batch begun is committed, not cut off
	for r := range ready {
		if ctx.Err() != nil {
			break
		}
		if r.err != nil {
			return t, r.err
		}
		if r.batch != nil {
			report, err := s.SealBatchOnce(commit, r.batch)
			if err != nil {
				return t, fmt.Errorf("seal spans up to line %d: %w", r.last, err)
			}
			t.add(report, r.lineNo)
		}
		t.lines, t.bytes = r.last, r.offset
		if progress != nil {
			progress(t)
		}
	}
	if err := ctx.Err(); err != nil {
		return t, fmt.Errorf("%w: %w", errSealInterrupted, err)
	}
	if t.spans() == 0 {
		return t, fmt.Errorf("%w: no spans in the input", protocol.ErrMalformed)
	}
	return t, nil
}

// preparedBatch is a parsed lineBatch whose entries the store is preparing (batch, nil
// when it has no spans), or its error.
type preparedBatch struct {
	batch  *store.Batch
	lineNo []int // lineBatch.lineNo
	last   int   // lineBatch.last
	offset int64 // lineBatch.offset
	err    error
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
		r := preparedBatch{lineNo: b.lineNo, last: b.last, offset: b.offset, err: b.err}
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
	b, line, offset := newBatch(), 0, int64(0)
	for sc.Scan() {
		line++
		offset += int64(len(sc.Bytes())) + 1 // the newline, or the end of the input
		b.last, b.offset = line, offset
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
			b.last, b.offset = line, offset // as far as the input is read, lines or not
		}
	}
	if err := sc.Err(); err != nil {
		b.readErr = fmt.Errorf("read spans: %w", err)
	}
	send(b)
}
