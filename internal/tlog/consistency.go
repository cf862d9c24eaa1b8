package tlog

import (
	"context"
	"crypto"
	"fmt"
	"net/http"
	"net/url"

	"github.com/transparency-dev/merkle/proof"
	"github.com/transparency-dev/merkle/rfc6962"
	"github.com/transparency-dev/tessera/client"

	"github.com/cairn-dev/cairn/pkg/protocol"
	"github.com/cairn-dev/cairn/pkg/witness"
)

// CheckURLConsistency reads the current checkpoint of the tlog-tiles log at base,
// verified under key, and proves from the log's own tiles that it extends seen, a
// checkpoint of that log verified before (seenNote as signed). It returns the current
// checkpoint's note. A current checkpoint smaller than seen, of its size with another
// root, or that the tiles do not prove consistent with it, is a *witness.SplitViewError
// stating both; a log that does not answer is an *UnavailableError.
func CheckURLConsistency(ctx context.Context, base *url.URL, hc *http.Client, key crypto.PublicKey, seenNote []byte, seen *protocol.Checkpoint) ([]byte, error) {
	f, err := urlFetcher(base, hc)
	if err != nil {
		return nil, err
	}
	raw, cp, err := readCheckpoint(ctx, f, "log at "+base.String(), key)
	if err != nil {
		return nil, err
	}
	split := func(reason string) error {
		return &witness.SplitViewError{Reason: reason, Seen: seenNote, Offered: raw}
	}
	switch {
	case cp.Origin != seen.Origin:
		return nil, fmt.Errorf("log at %s: its checkpoint is of %s, not %s", base, protocol.Quote(cp.Origin), protocol.Quote(seen.Origin))
	case cp.Size < seen.Size:
		return nil, split(fmt.Sprintf("the log's checkpoint now is of size %d, smaller than the one of size %d: the log went back on it", cp.Size, seen.Size))
	case cp.Size == seen.Size:
		return raw, witness.CompareCheckpoints(seenNote, seen, raw, cp)
	}
	pb, err := client.NewProofBuilder(ctx, cp.Size, f.ReadTile)
	if err != nil {
		return nil, &UnavailableError{Op: "build proof", Err: err}
	}
	hashes, err := pb.ConsistencyProof(ctx, seen.Size, cp.Size)
	if err != nil {
		return nil, &UnavailableError{Op: "build proof", Err: err}
	}
	if err := proof.VerifyConsistency(rfc6962.DefaultHasher, seen.Size, cp.Size, hashes, seen.Root, cp.Root); err != nil {
		return nil, split(fmt.Sprintf("the log's tiles do not prove that its checkpoint of size %d extends the one of size %d", cp.Size, seen.Size))
	}
	return raw, nil
}
