package federation

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/cairn-dev/cairn/internal/cli/cmdutil"
	"github.com/cairn-dev/cairn/pkg/bijotel"
)

// legacyReceiptFormat names the original's receipts in verify's JSON output.
const legacyReceiptFormat = "bijotel-federation-0.3"

// verifyLegacyReceipt verifies the original federation's receipt raw (read from name)
// under the key in the PEM file keyPath, which is required: no key pinned for a Cairn
// federation applies to another product's. It prints every check, as a table or JSON.
func verifyLegacyReceipt(stdout, stderr io.Writer, asJSON bool, name string, raw []byte, trust trustFlags) error {
	switch {
	case trust.federationKey == "":
		return cmdutil.UsageError{Err: errors.New("this is a BIJOTEL federation receipt: give --federation-key with the original federation's public key (PEM); no pinned key applies to another product's federation")}
	case trust.logKey != "":
		return cmdutil.UsageError{Err: errors.New("--log-key does not apply to a BIJOTEL receipt: its Rekor entry is not checked offline")}
	}
	text, err := os.ReadFile(trust.federationKey)
	if err != nil {
		return fmt.Errorf("read federation key: %w", err)
	}
	key, err := bijotel.ParseFederationKeyPEM(text)
	if err != nil {
		return fmt.Errorf("federation key %s: %w", trust.federationKey, err)
	}
	report, verr := bijotel.VerifyReceipt(raw, key)
	res := verifyResult{Receipt: name, Format: legacyReceiptFormat, KeyFrom: "--federation-key " + trust.federationKey}
	if report != nil {
		res.Checks = report.Checks
	}
	return printVerdict(stdout, stderr, asJSON, res, verr)
}
