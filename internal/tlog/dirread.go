package tlog

import (
	"context"
	"crypto"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"

	"github.com/transparency-dev/merkle/rfc6962"
	"github.com/transparency-dev/tessera/api/layout"
	"github.com/transparency-dev/tessera/client"

	"github.com/cairn-dev/cairn/pkg/protocol"
)

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
	logID, err := protocol.LogID(key)
	if err != nil {
		return nil, err
	}
	f := client.FileFetcher{Root: dir}
	raw, err := f.ReadCheckpoint(ctx)
	if err != nil {
		return nil, &UnavailableError{Op: "read checkpoint", Err: err}
	}
	cp, err := protocol.OpenCheckpoint(raw, key)
	if err != nil {
		return nil, fmt.Errorf("embedded log in %s: checkpoint: %w", dir, err)
	}
	if index < 0 || uint64(index) >= cp.Size {
		return nil, fmt.Errorf("%w: index %d, log size %d", ErrNotFound, index, cp.Size)
	}
	idx := uint64(index)
	bundle, err := client.GetEntryBundle(ctx, f.ReadEntryBundle, idx/layout.EntryBundleWidth, cp.Size)
	if err != nil {
		return nil, dirReadError("read entry", err)
	}
	if int(idx%layout.EntryBundleWidth) >= len(bundle.Entries) {
		return nil, fmt.Errorf("embedded log in %s: the entry bundle of index %d has %d entries", dir, idx, len(bundle.Entries))
	}
	body := bundle.Entries[idx%layout.EntryBundleWidth]
	pb, err := client.NewProofBuilder(ctx, cp.Size, f.ReadTile)
	if err != nil {
		return nil, dirReadError("build proof", err)
	}
	hashes, err := pb.InclusionProof(ctx, idx)
	if err != nil {
		return nil, dirReadError("build proof", err)
	}
	leaf := rfc6962.DefaultHasher.HashLeaf(body)
	e := &Entry{Index: index, UUID: hex.EncodeToString(leaf), Bundle: protocol.LogBundle{
		Body: base64.StdEncoding.EncodeToString(body), LogID: logID, LogIndex: index,
		Verification: protocol.LogVerification{InclusionProof: protocol.InclusionProof{
			LogIndex: index, RootHash: hex.EncodeToString(cp.Root), TreeSize: int64(cp.Size),
			Hashes: hexAll(hashes), Checkpoint: string(raw)}}}}
	e.Bundle.UUID = e.UUID
	if _, err := protocol.VerifyLogBundle(&e.Bundle, protocol.LogVerifyOptions{Key: key, AllowMissingSET: true}); err != nil {
		return nil, fmt.Errorf("embedded log in %s: entry %d: %w", dir, index, err)
	}
	return e, nil
}

// dirReadError is an *UnavailableError for a file that is not there, else err: a tile
// that exists but does not parse is the log's fault, not an outage.
func dirReadError(op string, err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return &UnavailableError{Op: op, Err: err}
	}
	return fmt.Errorf("embedded log: %s: %w", op, err)
}
