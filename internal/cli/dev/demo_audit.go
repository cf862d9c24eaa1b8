package dev

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

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
	records := fmt.Sprintf("records-run-%d.json", s.run)
	args := []string{"federation", "audit", "--config-dir", demoConfigDir, "--federation-key", demoAuditorKey,
		"--service", s.t.federationURL, "--log", s.t.federationURL + "/federation/log", "--fetch-records", records, "--receipt", receipt}
	for _, o := range s.orgs {
		args = append(args, "--export", filepath.Join("..", o.slug, o.export))
		if o.keyID != o.operatorID {
			s.sh.note(o.slug, "signs with its rotated key %s, whose ID is not its operator ID %s: the federation's records (its key history, "+
				"each rotation record proved in the log) tie it to the operator", o.keyID, o.operatorID)
		}
	}
	res, err := s.sh.must(ctx, s.auditor, "auditor", args...)
	if err != nil {
		return "", err
	}
	s.sh.output(res.lastLine())
	if !strings.HasPrefix(res.lastLine(), "AUDIT PASSED") { // partial: some check was not made
		return "", fmt.Errorf("the audit is not complete: %s", res.lastLine())
	}
	return fmt.Sprintf("every participant audited: the receipt verifies; each export's bodies, links, Merkle root and signature verify, "+
		"its key is its operator's (rotated keys through the logged rotation records, kept in %s for offline audits), and the receipt "+
		"binds its chain_signature; the log holds the anchor, proved against its checkpoint read now", records), nil
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
