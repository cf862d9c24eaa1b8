package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"

	"github.com/cairn-dev/cairn/internal/api"
	"github.com/cairn-dev/cairn/internal/otlp"
	"github.com/cairn-dev/cairn/internal/otlp/genaispans"
	"github.com/cairn-dev/cairn/internal/store"
)

// spansPerRequest is one OTLP request's spans: the Go SDK batch processor's default
// maximum export batch, as internal/otlp's benchmarks send.
const spansPerRequest = 512

// chainLoad is what the chain service did while the federation ran.
type chainLoad struct {
	spans    int64
	requests int64
	elapsed  time.Duration
	reads    []time.Duration // latency of each API read
	errs     []error
}

// runChainService serves `cairn serve`'s chain service (the store, the OTLP receiver at
// /v1/traces and the chain API) on loopback from a chain in dir, and until ctx ends
// posts OTLP/protobuf batches from one goroutine as fast as they are sealed, up to
// maxSpans spans (bounding the chain's size on disk), while another reads
// /api/chain/stats and /api/chain.
func runChainService(ctx context.Context, dir string, maxSpans int64) (*chainLoad, error) {
	secret := bytes.Repeat([]byte{0x5a}, 32)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	db := filepath.Join(dir, "chain.db")
	s, err := store.Open(db, secret)
	if err != nil {
		return nil, err
	}
	traces, err := otlp.NewHandler(s)
	if err != nil {
		return nil, errors.Join(err, s.Close())
	}
	h, err := api.New(api.Options{Store: s, DBPath: db, Secret: secret, Traces: traces})
	if err != nil {
		return nil, errors.Join(err, s.Close())
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, errors.Join(err, s.Close())
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(l) }()
	base := "http://" + l.Addr().String()

	load := &chainLoad{}
	began := time.Now()
	readerDone := make(chan []time.Duration, 1)
	readErr := make(chan error, 1)
	go func() {
		reads, err := readChain(ctx, base)
		readerDone <- reads
		readErr <- err
	}()
	ingestErr := ingest(ctx, base, maxSpans, load)
	load.elapsed = time.Since(began)
	<-ctx.Done() // reads go on until the federation's week ends
	load.reads = <-readerDone
	load.errs = append(load.errs, ingestErr, <-readErr)
	shutdown, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	return load, errors.Join(srv.Shutdown(shutdown), s.Close())
}

// ingest posts batches until ctx ends or maxSpans are sealed; each must be answered 200.
func ingest(ctx context.Context, base string, maxSpans int64, load *chainLoad) error {
	hc := &http.Client{Timeout: time.Minute}
	for r := 0; ctx.Err() == nil && load.spans < maxSpans; r++ {
		body, err := otlpRequest(r)
		if err != nil {
			return err
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/v1/traces", bytes.NewReader(body))
		if err != nil {
			return err
		}
		req.Header.Set("Content-Type", "application/x-protobuf")
		resp, err := hc.Do(req)
		if err != nil {
			if ctx.Err() != nil {
				return nil //nolint:nilerr // the week ended mid-request: not the service's failure
			}
			return err
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("POST /v1/traces: HTTP %d", resp.StatusCode)
		}
		load.requests++
		load.spans += spansPerRequest
	}
	return nil
}

// readChain reads the chain's stats and its newest entry in turn until ctx ends and
// returns each read's latency.
func readChain(ctx context.Context, base string) ([]time.Duration, error) {
	hc := &http.Client{Timeout: time.Minute}
	var reads []time.Duration
	for i := 0; ctx.Err() == nil; i++ {
		path := "/api/chain/stats"
		if i%2 == 1 {
			path = "/api/chain?limit=20"
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+path, nil)
		if err != nil {
			return reads, err
		}
		began := time.Now()
		resp, err := hc.Do(req)
		if err != nil {
			if ctx.Err() != nil {
				return reads, nil //nolint:nilerr // the week ended mid-request: not the service's failure
			}
			return reads, err
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return reads, fmt.Errorf("GET %s: HTTP %d", path, resp.StatusCode)
		}
		reads = append(reads, time.Since(began))
		select {
		case <-ctx.Done():
		case <-time.After(50 * time.Millisecond): // a dashboard polling, not a second writer
		}
	}
	return reads, nil
}

// otlpRequest is the r-th batch: spansPerRequest gen_ai chat spans with the attributes a
// typical instrumentation records, OTLP/protobuf encoded.
func otlpRequest(r int) ([]byte, error) {
	td := genaispans.Batch(r, spansPerRequest, "billing-assistant", 1795262401000000000+uint64(r)*1e9)
	return ptraceotlp.NewExportRequestFromTraces(td).MarshalProto()
}
