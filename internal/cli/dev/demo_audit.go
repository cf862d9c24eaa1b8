package dev

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/cairn-dev/cairn/internal/atomicfile"
	"github.com/cairn-dev/cairn/pkg/client"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

// demoAuditorKey is the federation key the auditor trusts, in its directory.
const demoAuditorKey = "federation.pem"

// audit is step 6: the auditor checks the anchor through the federation's own
// verification, then alone, with the receipt and the organizations' exports.
func (s *demoStory) audit(ctx context.Context) (string, error) {
	fp, err := s.auditorKey()
	if err != nil {
		return "", err
	}
	s.sh.note("auditor", "trusts the federation key %.16s... (%s, from /federation/status on its first run)", fp, demoAuditorKey)
	v, err := s.fed.VerifyAnchor(ctx, s.anchorID)
	if err != nil {
		return "", err
	}
	if failed := failedChecks(v); !v.Valid || len(failed) > 0 {
		reason := ""
		if v.Reason != nil {
			reason = *v.Reason
		}
		return "", fmt.Errorf("GET /federation/verify/%s: valid %t, failed checks %v: %s", s.anchorID, v.Valid, failed, reason)
	}
	s.sh.note("auditor", "GET /federation/verify/%s: valid, %d participants; signature, hash, key history and log inclusion checked",
		s.anchorID, v.Participants)

	receipt := filepath.Join("..", s.orgs[0].slug, s.receipt())
	args := []string{"federation", "audit", "--config-dir", demoConfigDir, "--federation-key", demoAuditorKey,
		"--log", s.t.federationURL + "/federation/log", "--receipt", receipt}
	var left []string
	for _, o := range s.orgs {
		if o.keyID != o.operatorID {
			left = append(left, o.slug)
			continue
		}
		args = append(args, "--export", filepath.Join("..", o.slug, o.export))
	}
	for _, slug := range left {
		s.sh.note(slug, "signs with its rotated key, whose ID is not its operator ID: audit cannot tie that export to the anchor, so it is left out")
	}
	res, err := s.sh.must(ctx, s.auditor, "auditor", args...)
	if err != nil {
		return "", err
	}
	s.sh.output(res.lastLine())
	return "the receipt verifies; each export's bodies, links, Merkle root and signature verify, and the receipt binds its chain_signature; the log holds the anchor, proved against its checkpoint read now", nil
}

// auditorKey pins, on the auditor's first run, the key the federation presents, and
// afterwards requires it; it returns its fingerprint.
func (s *demoStory) auditorKey() (string, error) {
	path := filepath.Join(s.auditor, demoAuditorKey)
	presented, err := protocol.ParsePublicKeyPEM([]byte(s.status.FederationPublicKey))
	if err != nil {
		return "", fmt.Errorf("the federation's key: %w", err)
	}
	text, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return protocol.Fingerprint(presented), atomicfile.Write(path, []byte(s.status.FederationPublicKey), 0o644)
	}
	if err != nil {
		return "", err
	}
	pinned, err := protocol.ParsePublicKeyPEM(text)
	if err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	if !pinned.Equal(presented) {
		return "", fmt.Errorf("the federation presents key %s, not the %s the auditor trusts", protocol.Fingerprint(presented), protocol.Fingerprint(pinned))
	}
	return protocol.Fingerprint(pinned), nil
}

// failedChecks names the checks of v that did not hold.
func failedChecks(v *client.Verification) []string {
	var failed []string
	for _, c := range []struct {
		name string
		ok   bool
	}{
		{"pubkey_matches_expected", v.Checks.PubkeyMatchesExpected},
		{"signature_verified", v.Checks.SignatureVerified},
		{"cross_anchor_hash_recomputed", v.Checks.CrossAnchorHashRecomputed},
		{"federation_key_in_history", v.Checks.FederationKeyInHistory},
		{"tlog_inclusion_verified", v.Checks.TLogInclusionVerified},
		{"participants_verified", v.Checks.ParticipantsVerified},
	} {
		if !c.ok {
			failed = append(failed, c.name)
		}
	}
	return failed
}
