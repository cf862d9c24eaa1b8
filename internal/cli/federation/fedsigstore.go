package federation

import (
	"context"
	"crypto"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/cairn-dev/cairn/internal/atomicfile"
	"github.com/cairn-dev/cairn/pkg/client"
	"github.com/cairn-dev/cairn/pkg/protocol"
	"github.com/cairn-dev/cairn/pkg/sigstorebundle"
)

// Receipt formats `cairn federation receipts --format` writes.
const (
	formatCairn          = "cairn"
	formatSigstoreBundle = "sigstore-bundle"
)

// sigstoreBundleFile is where a receipt's Sigstore bundle is written beside it.
func sigstoreBundleFile(dir, anchorID string) string {
	return filepath.Join(dir, anchorID+".sigstore.json")
}

// trustedRootFile is where the federation's Sigstore trusted root is written.
func trustedRootFile(dir string) string { return filepath.Join(dir, "trusted_root.json") }

// writeSigstoreBundle writes the log leg of r, a receipt that verified (its log leg
// under logKey when the receipt names none), as a Sigstore bundle beside it. A receipt
// without a log leg has none: false.
func writeSigstoreBundle(dir string, r *protocol.Receipt, logKey crypto.PublicKey) (bool, error) {
	if r.TLogEntry == nil {
		return false, nil
	}
	var b protocol.LogBundle
	if err := json.Unmarshal(r.TLogEntry, &b); err != nil {
		return false, err
	}
	if r.TLogPublicKeyPEM != nil {
		key, err := protocol.ParseLogPublicKeyPEM([]byte(*r.TLogPublicKeyPEM))
		if err != nil {
			return false, err
		}
		logKey = key
	}
	recordPEM := r.FederationPublicKeyPEM
	if r.TLogRecordPublicKeyPEM != nil {
		recordPEM = *r.TLogRecordPublicKeyPEM
	}
	recordKey, err := protocol.ParsePublicKeyPEM([]byte(recordPEM))
	if err != nil {
		return false, err
	}
	bundle, err := sigstorebundle.New(&b, logKey, protocol.Fingerprint(recordKey))
	if err != nil {
		return false, err
	}
	raw, err := bundle.Marshal()
	if err != nil {
		return false, err
	}
	return true, atomicfile.Write(sigstoreBundleFile(dir, r.AnchorID), append(raw, '\n'), 0o644)
}

// fetchTrustedRoot fetches the federation's Sigstore trusted root and checks that every
// log key it names is logKey, the key the receipts are verified under. A federation on its
// embedded log has none: Sigstore's tools do not read that log's checkpoints.
func fetchTrustedRoot(ctx context.Context, c *client.Client, logKey crypto.PublicKey) (*sigstorebundle.TrustedRoot, error) {
	if logKey == nil {
		return nil, errors.New("the trusted root names log keys, and no log key is trusted here: pin one (cairn federation trust) or pass --log-key")
	}
	raw, err := c.TrustedRoot(ctx)
	var apiErr *client.APIError
	if errors.As(err, &apiErr) && apiErr.Code == "log_not_served" {
		return nil, errors.New("--format sigstore-bundle: the federation logs to its embedded log, whose checkpoints Sigstore's tools do not read; cairn federation verify checks its receipts")
	}
	if err != nil {
		return nil, fmt.Errorf("the federation's trusted root: %w", err)
	}
	root, err := sigstorebundle.ParseTrustedRoot(raw)
	if err != nil {
		return nil, err
	}
	keys, err := root.LogKeys()
	if err != nil {
		return nil, err
	}
	for _, k := range keys {
		if eq, ok := k.(interface{ Equal(crypto.PublicKey) bool }); !ok || !eq.Equal(logKey) {
			return nil, fmt.Errorf("%w: the federation's trusted root names a log key other than the trusted one", protocol.ErrKeyNotTrusted)
		}
	}
	return root, nil
}

// writeTrustedRoot writes root into dir.
func writeTrustedRoot(dir string, root *sigstorebundle.TrustedRoot) error {
	out, err := root.Marshal()
	if err != nil {
		return err
	}
	return atomicfile.Write(trustedRootFile(dir), append(out, '\n'), 0o644)
}
