package federation

import (
	"crypto/ed25519"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

// acceptedSubmission is a Submission of operator op_00000000000000a1 ending at seq 7,
// signed by key and accepted at accepted, stored under uid.
func acceptedSubmission(t *testing.T, key ed25519.PrivateKey, accepted time.Time, uid types.UID) *fv1.Submission {
	t.Helper()
	h := protocol.ExportHeader{Format: protocol.ExportFormat, Version: protocol.ExportVersion, ExportedAt: "2026-11-24T06:30:00Z",
		EntryCount: 7, FirstSeq: 1, LastSeq: 7, FirstPrevHash: protocol.GenesisPrevHash, LastHMACHash: strings.Repeat("b", 64),
		ChainSignature: strings.Repeat("c", 64), EntriesRoot: strings.Repeat("d", 64)}
	signed, err := h.SignedBytes()
	if err != nil {
		t.Fatal(err)
	}
	sub := &fv1.Submission{Spec: fv1.SubmissionSpec{OperatorID: "op_00000000000000a1", ChainSignature: fv1.Hash(h.ChainSignature),
		EntryCount: 7, FirstSeq: 1, LastSeq: 7, FirstPrevHash: fv1.Hash(h.FirstPrevHash), LastHMACHash: fv1.Hash(h.LastHMACHash),
		ExportedAt: fv1.Timestamp(h.ExportedAt), SignedHeader: string(signed),
		Signature: fv1.Signature(base64.StdEncoding.EncodeToString(ed25519.Sign(key, signed)))}}
	sub.Name, sub.UID, sub.Generation = "sub", uid, 1
	sub.Status.Ed25519Verified, sub.Status.ContinuityVerified = true, true
	sub.Status.Conditions = []metav1.Condition{{Type: string(fv1.ConditionSignatureVerified), Status: "True", LastTransitionTime: metav1.NewTime(accepted)}}
	return sub
}

// TestVerdictCacheAnchors checks that an anchor's spec checks are remembered for its UID
// and generation only, that what can change (the key history) is read on every use, and
// that the answers are those of the uncached checks.
func TestVerdictCacheAnchors(t *testing.T) {
	key := ed25519.NewKeyFromSeed(make([]byte, ed25519.SeedSize))
	fed, ca := signedAnchor(t, key)
	ca.UID, ca.Generation = "uid-1", 1
	junk := ca.DeepCopy()
	junk.UID, junk.Spec.FederationSignature = "uid-2", fv1.Signature(base64.StdEncoding.EncodeToString(make([]byte, 64)))
	edited := ca.DeepCopy()
	edited.Generation, edited.Spec.CrossAnchorHash = 2, fv1.Hash(strings.Repeat("0", 64))
	rotatedAway := fed.DeepCopy()
	rotatedAway.Status.KeyHistory = nil

	c := NewVerdictCache(0, 0)
	steps := []struct {
		name       string
		fed        *fv1.Federation
		ca         *fv1.CrossAnchor
		trusted    bool
		hits, step uint64 // CheckAnchor's hits so far, and the step's number
	}{
		{"first check of a signed anchor", fed, ca, true, 0, 1},
		{"the same anchor again: remembered", fed, ca, true, 1, 2},
		{"a junk signature under another UID", fed, junk, false, 1, 3},
		{"the junk signature again: its failure remembered", fed, junk, false, 2, 4},
		{"a new generation with another hash: checked again", fed, edited, false, 2, 5},
		{"the key gone from the history: read now, not remembered", rotatedAway, ca, false, 3, 6},
		{"the key back: trusted again", fed, ca, true, 4, 7},
	}
	for _, s := range steps {
		got := c.CheckAnchor(s.fed, s.ca)
		if want := CheckAnchor(s.fed, s.ca); got.Trusted() != want.Trusted() || got.HashRecomputed != want.HashRecomputed ||
			got.SignatureVerified != want.SignatureVerified || strings.Join(got.Reasons, ";") != strings.Join(want.Reasons, ";") {
			t.Errorf("%s: cached %+v, uncached %+v", s.name, got, want)
		}
		if got.Trusted() != s.trusted || (c.TrustAnchor(s.fed, s.ca) == nil) != s.trusted {
			t.Errorf("%s: trusted %v, want %v", s.name, got.Trusted(), s.trusted)
		}
		if err := c.TrustAnchor(s.fed, s.ca); err != nil && !errors.Is(err, ErrUntrusted) {
			t.Errorf("%s: %v does not wrap ErrUntrusted", s.name, err)
		}
		st := c.Stats()
		// Each step's two TrustAnchor calls looked too, each a hit.
		if st.Hits != s.hits+2*s.step || st.Hits+st.Misses != 3*s.step {
			t.Errorf("%s: %d hits of %d lookups, want %d of %d", s.name, st.Hits, st.Hits+st.Misses, s.hits+2*s.step, 3*s.step)
		}
	}
}

// TestVerdictCacheParticipants checks that a header verification is remembered for the
// Submission's UID and generation and the key tried, and that the key history and the
// acceptance time are read on every use: a cached success never outlives a key the
// operator no longer held, and a cached failure never hides another submission's success.
func TestVerdictCacheParticipants(t *testing.T) {
	oldKey := ed25519.NewKeyFromSeed([]byte(strings.Repeat("o", ed25519.SeedSize)))
	stranger := ed25519.NewKeyFromSeed([]byte(strings.Repeat("s", ed25519.SeedSize)))
	pemOf := func(k ed25519.PrivateKey) fv1.PublicKeyPEM {
		p, err := protocol.MarshalPublicKeyPEM(k.Public().(ed25519.PublicKey))
		if err != nil {
			t.Fatal(err)
		}
		return fv1.PublicKeyPEM(p)
	}
	t0 := time.Date(2026, 11, 24, 6, 0, 0, 0, time.UTC)
	fo := &fv1.FederationOperator{}
	fo.Status.Phase, fo.Status.OperatorID = fv1.PhaseActive, "op_00000000000000a1"
	fo.Status.KeyHistory = []fv1.KeyRecord{{PublicKeyPEM: pemOf(oldKey), ValidFrom: metav1.NewTime(t0)}}
	later := fo.DeepCopy()
	later.Status.KeyHistory[0].ValidFrom = metav1.NewTime(t0.Add(2 * time.Hour)) // the key came after the acceptance
	p := fv1.Participant{OperatorID: "op_00000000000000a1", ChainSignature: fv1.Hash(strings.Repeat("c", 64)), LastSeq: 7}

	good := acceptedSubmission(t, oldKey, t0.Add(time.Hour), "sub-good")
	forged := acceptedSubmission(t, stranger, t0.Add(time.Hour), "sub-forged")
	resent := acceptedSubmission(t, oldKey, t0.Add(time.Hour), "sub-forged") // the same UID, a new generation
	resent.Generation = 2
	unstored := acceptedSubmission(t, oldKey, t0.Add(time.Hour), "")

	c := NewVerdictCache(0, 0)
	for _, s := range []struct {
		name   string
		fo     *fv1.FederationOperator
		sub    *fv1.Submission
		ok     bool
		misses uint64 // the cache's misses after this step, steps in order
	}{
		{"first check", fo, good, true, 1},
		{"again: remembered", fo, good, true, 1},
		{"the key no longer held then: read now", later, good, false, 1},
		{"held again", fo, good, true, 1},
		{"a forged header: checked", fo, forged, false, 2},
		{"the forged one again: its failure remembered", fo, forged, false, 2},
		{"the same UID at a new generation, signed right: checked again", fo, resent, true, 3},
		{"no UID: checked, never remembered", fo, unstored, true, 3},
		{"no UID again", fo, unstored, true, 3},
	} {
		err := c.VerifyParticipant(s.fo, s.sub, p)
		if want := VerifyParticipant(s.fo, s.sub, p); (err == nil) != (want == nil) {
			t.Errorf("%s: cached %v, uncached %v", s.name, err, want)
		}
		if (err == nil) != s.ok {
			t.Errorf("%s: %v, want ok %v", s.name, err, s.ok)
		}
		if err != nil && !errors.Is(err, ErrParticipantHeader) {
			t.Errorf("%s: %v, want ErrParticipantHeader", s.name, err)
		}
		if st := c.Stats(); st.Misses != s.misses {
			t.Errorf("%s: %d misses, want %d", s.name, st.Misses, s.misses)
		}
	}
}

// TestVerdictCacheBounds checks both bounds: past maxEntries or maxBytes the least
// recently used verdicts go, and one used since stays.
func TestVerdictCacheBounds(t *testing.T) {
	key := ed25519.NewKeyFromSeed(make([]byte, ed25519.SeedSize))
	fed, ca := signedAnchor(t, key)
	anchor := func(i int) *fv1.CrossAnchor {
		a := ca.DeepCopy()
		a.UID, a.Generation = types.UID(fmt.Sprintf("uid-%d", i)), 1
		return a
	}
	for name, tc := range map[string]struct {
		entries int
		bytes   int64
	}{
		"by entries": {entries: 3, bytes: 1 << 20},
		"by bytes":   {entries: 100, bytes: 2*entryOverhead + 2*int64(len("uid-0"))},
	} {
		t.Run(name, func(t *testing.T) {
			c := NewVerdictCache(tc.entries, tc.bytes)
			trust := func(i int) {
				t.Helper()
				if err := c.TrustAnchor(fed, anchor(i)); err != nil {
					t.Fatal(err)
				}
			}
			trust(0)
			for i := 1; i < 6; i++ {
				trust(i)
				trust(0) // used since: stays
			}
			st := c.Stats()
			if st.Entries > tc.entries || st.Bytes > tc.bytes {
				t.Fatalf("%d entries of %d bytes, bounds %d and %d", st.Entries, st.Bytes, tc.entries, tc.bytes)
			}
			hits := st.Hits
			trust(0)
			trust(5)
			if got := c.Stats().Hits - hits; got != 2 {
				t.Errorf("the recently used anchors: %d hits of 2", got)
			}
			misses := c.Stats().Misses
			trust(1)
			if c.Stats().Misses != misses+1 {
				t.Error("the least recently used anchor was kept past the bound")
			}
		})
	}
}

// TestVerdictCacheNil checks that a nil cache checks everything and remembers nothing.
func TestVerdictCacheNil(t *testing.T) {
	var c *VerdictCache
	key := ed25519.NewKeyFromSeed(make([]byte, ed25519.SeedSize))
	fed, ca := signedAnchor(t, key)
	ca.UID = "uid-1"
	if err := c.TrustAnchor(fed, ca); err != nil {
		t.Fatal(err)
	}
	if st := c.Stats(); st != (VerdictStats{}) {
		t.Errorf("a nil cache counts %+v", st)
	}
}

// TestVerdictCacheLogLeg checks that a log leg's verdict holds for the CrossAnchor's
// resourceVersion and the log's key only: a status write, or another key, is checked
// again.
func TestVerdictCacheLogLeg(t *testing.T) {
	key := ed25519.NewKeyFromSeed(make([]byte, ed25519.SeedSize))
	_, ca := signedAnchor(t, key)
	ca.UID, ca.ResourceVersion = "uid-1", "10"
	logKey := key.Public()
	otherKey := ed25519.NewKeyFromSeed([]byte(strings.Repeat("l", ed25519.SeedSize))).Public()
	c := NewVerdictCache(0, 0)
	for _, s := range []struct {
		name    string
		ca      *fv1.CrossAnchor
		logKey  any
		ok      bool
		entries int
	}{
		{"not logged yet: nothing to check", ca, logKey, true, 1},
		{"again", ca, logKey, true, 1},
		{"another log key", ca, otherKey, true, 2},
		{"Anchored without its entry: a new resourceVersion", func() *fv1.CrossAnchor {
			a := ca.DeepCopy()
			a.ResourceVersion, a.Status.Phase = "11", fv1.PhaseAnchored
			a.Status.LogEntry, a.Status.InclusionProof = &fv1.LogEntry{LogIndex: 1}, &fv1.InclusionProof{}
			return a
		}(), logKey, false, 3},
	} {
		if got := c.VerifyLogLeg(s.ca, s.logKey); got != s.ok || got != (VerifyLogLeg(s.ca, s.logKey) == nil) {
			t.Errorf("%s: %v, want %v", s.name, got, s.ok)
		}
		if st := c.Stats(); st.Entries != s.entries {
			t.Errorf("%s: %d entries, want %d", s.name, st.Entries, s.entries)
		}
	}
}
