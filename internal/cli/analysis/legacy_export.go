package analysis

import (
	"bufio"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"strings"

	"github.com/cairn-dev/cairn/internal/cli/cmdutil"
	"github.com/cairn-dev/cairn/pkg/bijotel"
)

// legacySniffBytes is how much of an export verify-export reads ahead to recognise a
// BIJOTEL export by its format member (the original writes it second).
const legacySniffBytes = 64 << 10

// legacyExportFormat returns the BIJOTEL format of the export br holds, or "" for any
// other input, without consuming it.
func legacyExportFormat(br *bufio.Reader) string {
	prefix, _ := br.Peek(legacySniffBytes) // a shorter input comes back whole with io.EOF
	return bijotel.SniffExportFormat(prefix)
}

// verifyLegacyExport verifies a bijotel-chain-v1/-v2 export read from in (named name)
// and prints the verdict first, then the file's SHA-256, the signer, every check and what
// no check covers. The error maps to the exit code: nil only when the secret bound every
// entry.
func verifyLegacyExport(stdout, stderr io.Writer, name string, in io.Reader, secret []byte, pub ed25519.PublicKey) error {
	sum := sha256.New()
	report, err := bijotel.VerifyExport(io.TeeReader(in, sum), bijotel.VerifyOptions{Secret: secret, PublicKey: pub})
	if report == nil {
		return err
	}
	var b strings.Builder
	env := report.Envelope
	what := fmt.Sprintf("%s export of %d entries", env.Format, env.Entries)
	if env.Entries > 0 {
		what = fmt.Sprintf("%s export of seq %d..%d (%d entries)", env.Format, report.FirstSeq, report.LastSeq, env.Entries)
	}
	fmt.Fprintf(&b, "%s: %s, trust mode %s: %s\n", report.Verdict, what, report.Mode, legacyVerdictMeaning(report, err))
	fmt.Fprintf(&b, "sha256: %s  %s\n", hex.EncodeToString(sum.Sum(nil)), name)
	switch {
	case report.SignerFingerprint != "":
		fmt.Fprintf(&b, "signed by: %s (Ed25519, the key the export embeds)\n", report.SignerFingerprint)
	case env.Signature != nil:
		b.WriteString("signed by: an embedded key that is not a base64 Ed25519 key\n")
	default:
		b.WriteString("signed by: nobody (no ed25519_signature block)\n")
	}
	cmdutil.WriteChecks(&b, report.Checks)
	for _, note := range report.Notes {
		fmt.Fprintf(&b, "note: %s\n", note)
	}
	if _, werr := io.WriteString(stdout, b.String()); werr != nil {
		return werr
	}
	if err != nil {
		_, _ = fmt.Fprintf(stderr, "cairn verify-export: %v\n", err)
		return cmdutil.SilentError{Err: err}
	}
	return nil
}

// legacyVerdictMeaning says in a few words what the verdict proves.
func legacyVerdictMeaning(report *bijotel.ExportReport, err error) string {
	if err == nil && report.Verdict != bijotel.VerdictValid {
		return "" // not reached: VerifyExport returns an error for every other verdict
	}
	switch report.Verdict {
	case bijotel.VerdictValid:
		if report.SignatureChecked {
			return "every HMAC, link, head_hash, entries_count and chain_signature checked with the secret, and the Ed25519 signature by the trusted key"
		}
		return "every HMAC, link, head_hash, entries_count and chain_signature checked with the secret (no public key: the signature, if any, not checked)"
	case bijotel.VerdictNotBound:
		return "the trusted key signed chain_signature, which binds no entry: a forged body or a cut tail would pass; give the HMAC secret (CAIRN_HMAC_SECRET) to bind the entries"
	case bijotel.VerdictUnbound:
		return "checked for structure only, nothing binds it to the operator: give the HMAC secret (CAIRN_HMAC_SECRET, --secret-hex, --secret-file), or for a v2 export --public-key"
	}
	return err.Error()
}
