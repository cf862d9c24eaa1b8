package federation

import (
	"container/list"
	"crypto"
	"fmt"
	"sync"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/types"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
)

// Defaults of NewVerdictCache, for a server that verifies anchors on request.
const (
	// DefaultVerdictEntries holds the participants of six full anchors (10,000 each).
	DefaultVerdictEntries = 65536
	// DefaultVerdictBytes bounds what the entries hold: their keys, PEMs and messages.
	DefaultVerdictBytes = 16 << 20
)

// VerdictCache remembers the outcome of the costly checks on inputs that cannot change:
//
//   - an anchor's spec: whether its hash recomputes and whether its signature verifies
//     under its own key snapshot (anchorHashError, anchorSignatureError), for the
//     CrossAnchor's UID and generation (its spec is immutable, and a change would bump the
//     generation);
//   - a participant's submission: whether its signed header verifies under one key and
//     matches its spec (VerifySubmissionHeader), for the Submission's UID and generation
//     and that key's exact PEM;
//   - an anchor's log leg: whether the entry its status records verifies under the log's
//     key (VerifyLogLeg), for the CrossAnchor's UID and resourceVersion (which any write
//     of its status changes) and that key.
//
// Each is a pure function of what keys it, so a remembered failure never hides a later
// success, nor a remembered success a later failure: a changed input is another key and
// misses. What can change is never remembered and is read again on every use: whether the
// anchor's key is in the Federation's key history, which keys the operator held when the
// submission was accepted, whether it is registered, and whether the submission is the one
// the participant binds. Objects without a UID (never stored) are checked, not remembered.
//
// It is bounded in entries and in approximate bytes; past either the least recently used
// entries go first. It is safe for concurrent use; a nil *VerdictCache remembers nothing.
type VerdictCache struct {
	maxEntries int
	maxBytes   int64

	mu      sync.Mutex
	bytes   int64
	order   *list.List // of *verdictEntry, most recently used first
	entries map[verdictKey]*list.Element

	hits, misses atomic.Uint64
}

// verdictKind tells what a verdict is of.
type verdictKind uint8

const (
	anchorSpecVerdict verdictKind = iota + 1
	headerVerdict
	logLegVerdict
)

// verdictKey is what a verdict holds for.
type verdictKey struct {
	kind       verdictKind
	uid        types.UID
	generation int64
	// version is the resourceVersion a logLegVerdict holds for.
	version string
	// key is the key a headerVerdict verified the header under, or the log's key a
	// logLegVerdict verified the entry under.
	key fv1.PublicKeyPEM
}

// verdictEntry is one remembered verdict.
type verdictEntry struct {
	key verdictKey
	// hashErr and sigErr are an anchor spec's (anchorSpecVerdict).
	hashErr, sigErr error
	// ok is a header's (headerVerdict) or a log leg's (logLegVerdict).
	ok   bool
	size int64
}

// NewVerdictCache returns a cache of at most maxEntries verdicts holding about maxBytes;
// a non-positive bound means its default (DefaultVerdictEntries, DefaultVerdictBytes).
func NewVerdictCache(maxEntries int, maxBytes int64) *VerdictCache {
	if maxEntries <= 0 {
		maxEntries = DefaultVerdictEntries
	}
	if maxBytes <= 0 {
		maxBytes = DefaultVerdictBytes
	}
	return &VerdictCache{maxEntries: maxEntries, maxBytes: maxBytes, order: list.New(), entries: map[verdictKey]*list.Element{}}
}

// VerdictStats is what a VerdictCache holds and how often it answered.
type VerdictStats struct {
	Entries int
	Bytes   int64
	// Hits are the checks answered from memory, Misses those run.
	Hits, Misses uint64
}

// Stats returns c's counts; the zero value for a nil c.
func (c *VerdictCache) Stats() VerdictStats {
	if c == nil {
		return VerdictStats{}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return VerdictStats{Entries: len(c.entries), Bytes: c.bytes, Hits: c.hits.Load(), Misses: c.misses.Load()}
}

// CheckAnchor is CheckAnchor(fed, ca), with ca's hash and signature checks remembered.
func (c *VerdictCache) CheckAnchor(fed *fv1.Federation, ca *fv1.CrossAnchor) AnchorChecks {
	hashErr, sigErr := c.anchorSpec(ca)
	return anchorChecks(fed, ca, hashErr, sigErr)
}

// TrustAnchor is TrustAnchor(fed, ca), with ca's hash and signature checks remembered:
// nil when the federation made ca, else an error wrapping ErrUntrusted that says which
// check failed.
func (c *VerdictCache) TrustAnchor(fed *fv1.Federation, ca *fv1.CrossAnchor) error {
	hashErr, sigErr := c.anchorSpec(ca)
	if hashErr != nil {
		return hashErr
	}
	if sigErr != nil {
		return sigErr
	}
	if KeyIndex(fed, ca.Spec.FederationPublicKeyPEM) < 0 {
		return fmt.Errorf("%w: CrossAnchor %s is signed by a key that is not in Federation %s's key history", ErrUntrusted, ca.Name, fed.Name)
	}
	return nil
}

// VerifyParticipant is VerifyParticipant(fo, sub, p), with each header verification under
// one key remembered.
func (c *VerdictCache) VerifyParticipant(fo *fv1.FederationOperator, sub *fv1.Submission, p fv1.Participant) error {
	return verifyParticipant(fo, sub, p, c.headerVerifies)
}

// VerifyLogLeg reports whether VerifyLogLeg(ca, logKey) passes, remembered for ca's UID
// and resourceVersion and logKey. A key that cannot be marshalled is checked each time.
func (c *VerdictCache) VerifyLogLeg(ca *fv1.CrossAnchor, logKey crypto.PublicKey) bool {
	pemText, err := LogKeyPEM(logKey)
	if err != nil || ca.ResourceVersion == "" {
		return VerifyLogLeg(ca, logKey) == nil
	}
	k := verdictKey{kind: logLegVerdict, uid: ca.UID, version: ca.ResourceVersion, key: fv1.PublicKeyPEM(pemText)}
	if e := c.get(k); e != nil {
		return e.ok
	}
	e := &verdictEntry{key: k, ok: VerifyLogLeg(ca, logKey) == nil}
	e.size = entryOverhead + int64(len(k.uid)+len(k.version)+len(k.key))
	c.put(e)
	return e.ok
}

// anchorSpec returns what checking ca's hash and its signature found, remembered.
func (c *VerdictCache) anchorSpec(ca *fv1.CrossAnchor) (hashErr, sigErr error) {
	k := verdictKey{kind: anchorSpecVerdict, uid: ca.UID, generation: ca.Generation}
	if e := c.get(k); e != nil {
		return e.hashErr, e.sigErr
	}
	e := &verdictEntry{key: k, hashErr: anchorHashError(ca), sigErr: anchorSignatureError(ca)}
	e.size = entryOverhead + int64(len(k.uid)) + errorSize(e.hashErr) + errorSize(e.sigErr)
	c.put(e)
	return e.hashErr, e.sigErr
}

// headerVerifies is headerVerifies(sub, keyPEM), remembered.
func (c *VerdictCache) headerVerifies(sub *fv1.Submission, keyPEM fv1.PublicKeyPEM) bool {
	k := verdictKey{kind: headerVerdict, uid: sub.UID, generation: sub.Generation, key: keyPEM}
	if e := c.get(k); e != nil {
		return e.ok
	}
	e := &verdictEntry{key: k, ok: headerVerifies(sub, keyPEM)}
	e.size = entryOverhead + int64(len(k.uid)+len(k.key))
	c.put(e)
	return e.ok
}

// entryOverhead approximates what an entry holds besides its strings: the entry, its list
// element and its map slot.
const entryOverhead = 160

// errorSize approximates what err's message holds.
func errorSize(err error) int64 {
	if err == nil {
		return 0
	}
	return int64(len(err.Error())) + 32
}

// get returns the entry of k, marking it used, or nil (always nil when c is nil or k's
// object has no UID, which counts as a miss).
func (c *VerdictCache) get(k verdictKey) *verdictEntry {
	if c == nil || k.uid == "" {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.entries[k]
	if !ok {
		c.misses.Add(1)
		return nil
	}
	c.hits.Add(1)
	c.order.MoveToFront(el)
	return el.Value.(*verdictEntry)
}

// put remembers e, evicting the least recently used entries past the bounds. An entry
// larger than the byte bound is not kept.
func (c *VerdictCache) put(e *verdictEntry) {
	if c == nil || e.key.uid == "" || e.size > c.maxBytes {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.entries[e.key]; ok { // two requests checked it at once
		c.order.MoveToFront(el)
		return
	}
	c.entries[e.key] = c.order.PushFront(e)
	c.bytes += e.size
	for len(c.entries) > c.maxEntries || c.bytes > c.maxBytes {
		oldest := c.order.Back()
		old := oldest.Value.(*verdictEntry)
		c.order.Remove(oldest)
		delete(c.entries, old.key)
		c.bytes -= old.size
	}
}
