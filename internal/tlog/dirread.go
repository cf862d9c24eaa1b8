package tlog

import (
	"context"
	"crypto"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"

	"github.com/transparency-dev/merkle/rfc6962"
	"github.com/transparency-dev/tessera/api/layout"
	"github.com/transparency-dev/tessera/client"

	"github.com/cairn-dev/cairn/pkg/protocol"
)

// tileReader reads a C2SP tlog-tiles log: tessera's client.FileFetcher (a directory) or
// client.HTTPFetcher (a URL).
type tileReader interface {
	ReadCheckpoint(ctx context.Context) ([]byte, error)
	ReadTile(ctx context.Context, level, index uint64, partial uint8) ([]byte, error)
	ReadEntryBundle(ctx context.Context, index uint64, partial uint8) ([]byte, error)
}

// ReadDirEntry reads the entry at index of the embedded log in dir without opening the
// log, as a process other than its writer may (it takes no lock and writes nothing): it
// reads the checkpoint now and verifies it under key, reads the entry from its entry
// bundle, builds its inclusion proof from the hash tiles and checks that proof against
// the checkpoint. The returned Entry's Bundle has no signed entry timestamp (the reader
// holds no private key) and no integrated time; it verifies under key with
// protocol.LogVerifyOptions.AllowMissingSET. Its URL is empty.
//
// An index at or past the checkpoint's size is ErrNotFound; files that cannot be read
// (no log in dir, a missing tile) are an *UnavailableError; a checkpoint not signed by
// key, or tiles that do not lead to its root, are other errors: the log is not what key
// vouches for.
func ReadDirEntry(ctx context.Context, dir string, index int64, key crypto.PublicKey) (*Entry, error) {
	return readTiledEntry(ctx, client.FileFetcher{Root: dir}, "embedded log in "+dir, index, key, func(op string, err error) error {
		if errors.Is(err, fs.ErrNotExist) {
			return &UnavailableError{Op: op, Err: err}
		}
		return fmt.Errorf("embedded log in %s: %s: %w", dir, op, err) // a tile that exists but does not parse
	})
}

// MaxTileBytes is the largest answer ReadURLEntry reads: a full tile is 8 KiB, a full
// entry bundle 256 entries of at most a few KiB each.
const MaxTileBytes = 4 << 20

// ReadURLEntry is ReadDirEntry for an embedded log served over HTTP as tlog-tiles, at
// base (such as a federation's <publicURL>/federation/log), read with hc (nil: a client
// with no timeout; bound ctx instead). Any answer that is not the resource (no answer, a
// status other than 200, a body over MaxTileBytes) is an *UnavailableError; a checkpoint
// not signed by key, or tiles that do not lead to its root, are other errors.
func ReadURLEntry(ctx context.Context, base *url.URL, hc *http.Client, index int64, key crypto.PublicKey) (*Entry, error) {
	f, err := urlFetcher(base, hc)
	if err != nil {
		return nil, err
	}
	return readTiledEntry(ctx, f, "log at "+base.String(), index, key, func(op string, err error) error {
		return &UnavailableError{Op: op, Err: err}
	})
}

// readTiledEntry is ReadDirEntry over any tileReader; where names the log in errors and
// fetchErr turns a failed read into the error to return.
func readTiledEntry(ctx context.Context, f tileReader, where string, index int64, key crypto.PublicKey, fetchErr func(op string, err error) error) (*Entry, error) {
	logID, err := protocol.LogID(key)
	if err != nil {
		return nil, err
	}
	raw, cp, err := readCheckpoint(ctx, f, where, key)
	if err != nil {
		return nil, err
	}
	if index < 0 || uint64(index) >= cp.Size {
		return nil, fmt.Errorf("%w: index %d, log size %d", ErrNotFound, index, cp.Size)
	}
	idx := uint64(index)
	bundle, err := client.GetEntryBundle(ctx, f.ReadEntryBundle, idx/layout.EntryBundleWidth, cp.Size)
	if err != nil {
		return nil, fetchErr("read entry", err)
	}
	if int(idx%layout.EntryBundleWidth) >= len(bundle.Entries) {
		return nil, fmt.Errorf("%s: the entry bundle of index %d has %d entries", where, idx, len(bundle.Entries))
	}
	body := bundle.Entries[idx%layout.EntryBundleWidth]
	pb, err := client.NewProofBuilder(ctx, cp.Size, f.ReadTile)
	if err != nil {
		return nil, fetchErr("build proof", err)
	}
	hashes, err := pb.InclusionProof(ctx, idx)
	if err != nil {
		return nil, fetchErr("build proof", err)
	}
	leaf := rfc6962.DefaultHasher.HashLeaf(body)
	e := &Entry{Index: index, UUID: hex.EncodeToString(leaf), Bundle: protocol.LogBundle{
		Body: base64.StdEncoding.EncodeToString(body), LogID: logID, LogIndex: index,
		Verification: protocol.LogVerification{InclusionProof: protocol.InclusionProof{
			LogIndex: index, RootHash: hex.EncodeToString(cp.Root), TreeSize: int64(cp.Size),
			Hashes: hexAll(hashes), Checkpoint: string(raw)}}}}
	e.Bundle.UUID = e.UUID
	if _, err := protocol.VerifyLogBundle(&e.Bundle, protocol.LogVerifyOptions{Key: key, AllowMissingSET: true}); err != nil {
		return nil, fmt.Errorf("%s: entry %d: %w", where, index, err)
	}
	return e, nil
}

// urlFetcher reads the tlog-tiles log at base with hc's transport and timeout (nil: the
// default transport, no timeout), refusing answers over MaxTileBytes.
func urlFetcher(base *url.URL, hc *http.Client) (*client.HTTPFetcher, error) {
	limited := &http.Client{Transport: limitedTransport{next: http.DefaultTransport}}
	if hc != nil {
		limited.Transport, limited.Timeout = limitedTransport{next: cmpTransport(hc.Transport)}, hc.Timeout
	}
	root := *base
	return client.NewHTTPFetcher(&root, limited)
}

// readCheckpoint reads f's checkpoint and verifies it under key; where names the log.
func readCheckpoint(ctx context.Context, f tileReader, where string, key crypto.PublicKey) ([]byte, *protocol.Checkpoint, error) {
	raw, err := f.ReadCheckpoint(ctx)
	if err != nil {
		return nil, nil, &UnavailableError{Op: "read checkpoint", Err: err}
	}
	cp, err := protocol.OpenCheckpoint(raw, key)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: checkpoint: %w", where, err)
	}
	return raw, cp, nil
}

// limitedTransport refuses answers over MaxTileBytes.
type limitedTransport struct{ next http.RoundTripper }

func (t limitedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	resp.Body = &limitedBody{ReadCloser: resp.Body, left: MaxTileBytes}
	return resp, nil
}

// limitedBody fails a read past its limit instead of truncating silently.
type limitedBody struct {
	io.ReadCloser
	left int64
}

func (b *limitedBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		return 0, fmt.Errorf("answer is over %d bytes", MaxTileBytes)
	}
	if int64(len(p)) > b.left {
		p = p[:b.left+1] // one byte more tells a body of exactly the limit from a longer one
	}
	n, err := b.ReadCloser.Read(p)
	b.left -= int64(n)
	if b.left < 0 {
		return 0, fmt.Errorf("answer is over %d bytes", MaxTileBytes)
	}
	return n, err
}

// cmpTransport is rt, or http.DefaultTransport when nil.
func cmpTransport(rt http.RoundTripper) http.RoundTripper {
	if rt == nil {
		return http.DefaultTransport
	}
	return rt
}
