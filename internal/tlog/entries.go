package tlog

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/transparency-dev/merkle/compact"
	"github.com/transparency-dev/merkle/proof"
	"github.com/transparency-dev/merkle/rfc6962"
	"github.com/transparency-dev/tessera/api"
	"github.com/transparency-dev/tessera/api/layout"
	"github.com/transparency-dev/tessera/client"

	"github.com/cairn-dev/cairn/pkg/protocol"
)

// This file reads the embedded log's entries back with their proofs.

// checkpointView is a checkpoint of the log, verified once, and the tree nodes read or
// computed for proofs against it: the uploads a checkpoint covers share them.
type checkpointView struct {
	raw   []byte
	cp    *protocol.Checkpoint
	read  client.TileFetcherFunc
	mu    sync.Mutex                 // guards the maps
	tiles map[[2]uint64]api.HashTile // by tile level and index
	nodes map[compact.NodeID][]byte  // hashes of the tree at cp.Size
}

// latest returns a view of the log's latest checkpoint.
func (l *Embedded) latest(ctx context.Context) (*checkpointView, error) {
	raw, err := l.reader.ReadCheckpoint(ctx)
	if err != nil {
		return nil, &UnavailableError{Op: "read checkpoint", Err: err}
	}
	l.viewMu.Lock()
	defer l.viewMu.Unlock()
	if l.view != nil && bytes.Equal(l.view.raw, raw) {
		return l.view, nil
	}
	cp, err := protocol.OpenCheckpoint(raw, l.pub)
	if err != nil {
		return nil, fmt.Errorf("embedded log's own checkpoint: %w", err)
	}
	l.view = newView(raw, cp, l.reader.ReadTile)
	return l.view, nil
}

// witnessed returns a view of the latest checkpoint whose cosignatures meet the log's
// witness policy, nil when there is none (no policy, no file, or too few cosignatures).
// The file is re-verified, under the log's key and the policy, whenever it changes.
func (l *Embedded) witnessed() *checkpointView {
	if l.witnessing == nil {
		return nil
	}
	raw, err := os.ReadFile(filepath.Join(l.opts.Dir, WitnessedCheckpointFile))
	if err != nil {
		return nil
	}
	l.viewMu.Lock()
	defer l.viewMu.Unlock()
	if l.witView != nil && bytes.Equal(l.witView.raw, raw) {
		return l.witView
	}
	cp, err := protocol.OpenCheckpoint(raw, l.pub)
	if err != nil {
		return nil
	}
	if v, err := l.opts.Witnesses.Check(raw); err != nil || !v.Satisfied {
		return nil
	}
	l.witView = newView(raw, cp, l.reader.ReadTile)
	return l.witView
}

func newView(raw []byte, cp *protocol.Checkpoint, read client.TileFetcherFunc) *checkpointView {
	return &checkpointView{raw: raw, cp: cp, read: read, tiles: map[[2]uint64]api.HashTile{}, nodes: map[compact.NodeID][]byte{}}
}

// inclusion returns the proof for index against v. It does what tessera's
// client.ProofBuilder does, but keeps the hashes it computes inside tiles for the next
// proof, which made proofs for concurrent uploads about twice as cheap.
func (v *checkpointView) inclusion(ctx context.Context, index uint64) ([][]byte, error) {
	nodes, err := proof.Inclusion(index, v.cp.Size)
	if err != nil {
		return nil, err
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	hashes := make([][]byte, len(nodes.IDs))
	for i, id := range nodes.IDs {
		if hashes[i], err = v.node(ctx, id); err != nil {
			return nil, err
		}
	}
	return nodes.Rehash(hashes, rfc6962.DefaultHasher.HashChildren)
}

// node returns the hash of a node of the tree at v.cp.Size that the tiles hold: a tile
// stores the 256 nodes of its bottom row, and a node above them is hashed from its two
// children.
func (v *checkpointView) node(ctx context.Context, id compact.NodeID) ([]byte, error) {
	if h, ok := v.nodes[id]; ok {
		return h, nil
	}
	tileLevel, tileIndex, nodeLevel, nodeIndex := layout.NodeCoordsToTileAddress(uint64(id.Level), id.Index)
	var h []byte
	if nodeLevel == 0 {
		key := [2]uint64{tileLevel, tileIndex}
		tile, ok := v.tiles[key]
		if !ok {
			raw, err := v.read(ctx, tileLevel, tileIndex, layout.PartialTileSize(tileLevel, tileIndex, v.cp.Size))
			if err != nil {
				return nil, err
			}
			if err := tile.UnmarshalText(raw); err != nil {
				return nil, fmt.Errorf("tile %d/%d: %w", tileLevel, tileIndex, err)
			}
			v.tiles[key] = tile
		}
		if nodeIndex >= uint64(len(tile.Nodes)) {
			return nil, fmt.Errorf("tile %d/%d has %d nodes, want node %d", tileLevel, tileIndex, len(tile.Nodes), nodeIndex)
		}
		h = tile.Nodes[nodeIndex]
	} else {
		left, err := v.node(ctx, compact.NewNodeID(id.Level-1, id.Index*2))
		if err != nil {
			return nil, err
		}
		right, err := v.node(ctx, compact.NewNodeID(id.Level-1, id.Index*2+1))
		if err != nil {
			return nil, err
		}
		h = rfc6962.DefaultHasher.HashChildren(left, right)
	}
	v.nodes[id] = h
	return h, nil
}

// Entry returns the entry at index with a proof against the latest checkpoint, or, under a
// witness policy, the latest whose cosignatures meet it when that one covers the entry.
func (l *Embedded) Entry(ctx context.Context, index int64) (*Entry, error) {
	if err := l.open("read entry"); err != nil {
		return nil, err
	}
	defer l.mu.RUnlock()
	return l.entry(ctx, index, nil, time.Time{})
}

// entry returns the entry at index. body and integrated are read from the log when body
// is nil.
func (l *Embedded) entry(ctx context.Context, index int64, body []byte, integrated time.Time) (*Entry, error) {
	v, err := l.latest(ctx)
	if err != nil {
		return nil, err
	}
	if w := l.witnessed(); w != nil && index >= 0 && uint64(index) < w.cp.Size {
		v = w
	}
	if index < 0 || uint64(index) >= v.cp.Size {
		return nil, fmt.Errorf("%w: index %d, log size %d", ErrNotFound, index, v.cp.Size)
	}
	idx := uint64(index)
	if body == nil {
		if body, err = l.readBody(ctx, idx, v.cp.Size); err != nil {
			return nil, err
		}
		if integrated, err = l.index.integrated(ctx, index); err != nil {
			return nil, &UnavailableError{Op: "read entry", Err: err}
		}
	}
	hashes, err := v.inclusion(ctx, idx)
	if err != nil {
		return nil, &UnavailableError{Op: "build proof", Err: err}
	}
	leaf := rfc6962.DefaultHasher.HashLeaf(body)
	// Never hand out a proof that does not verify; the checkpoint was verified above.
	if err := proof.VerifyInclusion(rfc6962.DefaultHasher, idx, v.cp.Size, leaf, hashes, v.cp.Root); err != nil {
		return nil, fmt.Errorf("embedded log built a proof that does not verify: %w", err)
	}
	e := &Entry{
		Index:          index,
		UUID:           hex.EncodeToString(leaf),
		URL:            l.opts.URL,
		IntegratedTime: integrated,
		Bundle: protocol.LogBundle{
			Body:     base64.StdEncoding.EncodeToString(body),
			LogID:    l.logID,
			LogIndex: index,
			Verification: protocol.LogVerification{InclusionProof: protocol.InclusionProof{
				LogIndex:   index,
				RootHash:   hex.EncodeToString(v.cp.Root),
				TreeSize:   int64(v.cp.Size),
				Hashes:     hexAll(hashes),
				Checkpoint: string(v.raw),
			}},
		},
	}
	e.Bundle.UUID = e.UUID
	if !integrated.IsZero() {
		e.Bundle.IntegratedTime = integrated.Unix()
	}
	// The signed entry timestamp, as Rekor gives it: the log vouches for integratedTime
	// and logIndex, which no proof covers.
	payload, err := protocol.EntryTimestampPayload(&e.Bundle)
	if err != nil {
		return nil, err
	}
	e.Bundle.Verification.SignedEntryTimestamp = base64.StdEncoding.EncodeToString(ed25519.Sign(l.priv, payload))
	return e, nil
}

// readBody reads entry idx from its entry bundle.
func (l *Embedded) readBody(ctx context.Context, idx, size uint64) ([]byte, error) {
	bundle, err := client.GetEntryBundle(ctx, l.reader.ReadEntryBundle, idx/layout.EntryBundleWidth, size)
	if err != nil {
		return nil, &UnavailableError{Op: "read entry", Err: err}
	}
	if int(idx%layout.EntryBundleWidth) >= len(bundle.Entries) {
		return nil, fmt.Errorf("embedded log: the entry bundle of index %d has %d entries", idx, len(bundle.Entries))
	}
	return bundle.Entries[idx%layout.EntryBundleWidth], nil
}

func hexAll(hashes [][]byte) []string {
	out := make([]string, len(hashes))
	for i, h := range hashes {
		out[i] = hex.EncodeToString(h)
	}
	return out
}
