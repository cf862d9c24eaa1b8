package main

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"fmt"
	"math/rand/v2"
	"net/http"
	"time"

	"github.com/cairn-dev/cairn/pkg/client"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

// simOperator is one organization of the simulated federation: its own Ed25519 key,
// chain secret and chain, and the cadence it submits on. Its chain lives in memory: the
// entries sealed since its last accepted submission wait in unsent.
type simOperator struct {
	index   int
	key     ed25519.PrivateKey
	secret  []byte
	sealer  *protocol.EntrySealer
	client  *client.Client
	id      string
	cadence time.Duration
	next    time.Time // simulated time of its next submission

	seq    int64  // last sealed seq
	head   string // hmac_hash of entry seq
	unsent []*protocol.Entry
	// accepted are the last seqs of its submissions the API accepted, in order: the run
	// checks each is answered at the end.
	accepted []int64
}

// newSimOperator makes operator i with a key and secret from rng, submitting every
// cadence from a first time within its first cadence after start.
func newSimOperator(i int, rng *rand.Rand, cadence time.Duration, start time.Time) (*simOperator, error) {
	var seed [ed25519.SeedSize]byte
	secret := make([]byte, 32)
	for j := range seed {
		seed[j] = byte(rng.UintN(256))
	}
	for j := range secret {
		secret[j] = byte(rng.UintN(256))
	}
	sealer, err := protocol.NewEntrySealer(secret)
	if err != nil {
		return nil, err
	}
	key := ed25519.NewKeyFromSeed(seed[:])
	return &simOperator{index: i, key: key, secret: secret, sealer: sealer, cadence: cadence,
		id:   protocol.OperatorID(key.Public().(ed25519.PublicKey)),
		next: start.Add(time.Duration(rng.Int64N(int64(cadence)))), head: protocol.GenesisPrevHash}, nil
}

// register registers the operator through the real challenge flow and keeps a client
// acting as it, dated by now.
func (o *simOperator) register(ctx context.Context, base string, hc *http.Client, now func() time.Time) error {
	anon, err := client.New(base, client.WithHTTPClient(hc), client.WithRetry(1, 0), client.WithClock(now))
	if err != nil {
		return err
	}
	reg, err := anon.Register(ctx, o.key, fmt.Sprintf("Load org %04d", o.index), "")
	if err != nil {
		return fmt.Errorf("register operator %d: %w", o.index, err)
	}
	if reg.OperatorID != o.id {
		return fmt.Errorf("register operator %d: the federation says %s, want %s", o.index, reg.OperatorID, o.id)
	}
	// One attempt only: a retried submit whose first attempt landed would blur the
	// count of what the API accepted.
	o.client, err = client.New(base, client.WithHTTPClient(hc), client.WithRetry(1, 0), client.WithClock(now),
		client.WithOperator(o.id, o.key))
	return err
}

// seal appends n spans to the operator's chain, dated at simulated time at.
func (o *simOperator) seal(n int, at time.Time) error {
	for range n {
		seq := o.seq + 1
		start := at.UnixNano() + seq
		body := protocol.SpanBody{Name: "chat", Kind: "CLIENT", StartTimeNS: start, EndTimeNS: start + 500_000_000,
			TraceID: fmt.Sprintf("%016x%016x", o.index+1, seq), SpanID: fmt.Sprintf("%016x", seq),
			StatusCode: "OK", Attributes: map[string]any{"gen_ai.request.model": "m", "gen_ai.usage.output_tokens": seq % 1000}}
		e, err := o.sealer.Seal(seq, o.head, body)
		if err != nil {
			return fmt.Errorf("operator %d: seal seq %d: %w", o.index, seq, err)
		}
		o.seq, o.head = seq, e.HMACHash
		o.unsent = append(o.unsent, e)
	}
	return nil
}

// export writes the signed cairn-chain-v2 export of the unsent entries.
func (o *simOperator) export(at time.Time) ([]byte, error) {
	var buf bytes.Buffer
	w, err := protocol.NewExportWriter(&buf, protocol.ExportOptions{Secret: o.secret, Key: o.key, ExportedAt: at})
	if err != nil {
		return nil, err
	}
	for _, e := range o.unsent {
		if err := w.Write(e); err != nil {
			return nil, err
		}
	}
	if _, err := w.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// maxPendingResends bounds how often one export is sent again after 504
// submission_pending.
const maxPendingResends = 60

// submission is one submit's outcome.
type submission struct {
	operator *simOperator
	id       string // the API's submission_id on a 2xx
	lastSeq  int64
	latency  time.Duration // from the first send to the verdict
	resends  int           // times the export was sent again after 504 submission_pending
	err      error
}

// submit seals entries spans, exports everything unsent and posts it. On a 2xx the
// unsent entries are done; otherwise they wait for the next submission, which continues
// the chain from the last accepted one.
func (o *simOperator) submit(ctx context.Context, entries int, at time.Time) submission {
	if err := o.seal(entries, at); err != nil {
		return submission{operator: o, err: err}
	}
	export, err := o.export(at)
	if err != nil {
		return submission{operator: o, err: err}
	}
	began := time.Now()
	s := submission{operator: o, lastSeq: o.seq}
	res, err := o.client.Submit(ctx, export)
	// 504 submission_pending: the federation recorded the export but its controller has
	// not judged it within the API's wait. As the answer says, the same export is sent
	// again for its verdict (the API answers from the recorded Submission).
	for client.IsCode(err, "submission_pending") && s.resends < maxPendingResends {
		s.resends++
		select {
		case <-ctx.Done():
		case <-time.After(time.Second):
		}
		res, err = o.client.Submit(ctx, export)
	}
	s.latency, s.err = time.Since(began), err
	if err == nil {
		s.id = res.SubmissionID
		o.unsent = o.unsent[:0]
	}
	return s
}
