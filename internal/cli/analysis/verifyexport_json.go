package analysis

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"io"

	"github.com/cairn-dev/cairn/internal/cli/cmdutil"
	"github.com/cairn-dev/cairn/pkg/bijotel"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

// exportVerdictJSON is what `cairn verify-export --json` prints: one document, whatever
// the outcome, with the exit status of the text form.
type exportVerdictJSON struct {
	// Valid is true exactly when the text form's first line says "valid".
	Valid bool `json:"valid"`
	// Verdict is the text form's first word(s): "valid", "checks passed, not all
	// authenticated", "invalid", or for a BIJOTEL export that product's verdict.
	Verdict string `json:"verdict"`
	Format  string `json:"format,omitempty"`
	// FirstSeq and LastSeq are the export's range, 0 when unknown.
	FirstSeq              int64            `json:"first_seq"`
	LastSeq               int64            `json:"last_seq"`
	Entries               int64            `json:"entries"`
	HMACsChecked          bool             `json:"hmacs_checked"`
	ChainSignatureChecked bool             `json:"chain_signature_checked"`
	KeyTrusted            bool             `json:"key_trusted"`
	Checks                []protocol.Check `json:"checks"`
	// Authenticated and Unauthenticated name the header members something trusted vouches
	// for, and the others (cairn-chain-v2 only).
	Authenticated   []string `json:"authenticated,omitempty"`
	Unauthenticated []string `json:"unauthenticated,omitempty"`
	// Import is the line about imported BIJOTEL entries, when the export carries them.
	Import string `json:"import,omitempty"`
	// Header is the export's header, as read (cairn-chain-v2 only).
	Header *protocol.ExportHeader `json:"header,omitempty"`
	// SHA256 is the file's SHA-256 (BIJOTEL exports, as the text form prints it).
	SHA256 string `json:"sha256,omitempty"`
	// SignerFingerprint is the key a BIJOTEL export embeds.
	SignerFingerprint string   `json:"signer_fingerprint,omitempty"`
	Notes             []string `json:"notes,omitempty"`
	// Error says why the export does not verify; absent when it does.
	Error string `json:"error,omitempty"`
	// ExitCode is the command's exit status, as federation verify --json gives it.
	ExitCode int `json:"exit_code"`
}

// writeExportReportJSON prints the verdict on a cairn-chain-v2 export (report may be nil
// when err says why) and returns err, already printed, for the exit status.
func writeExportReportJSON(w io.Writer, report *protocol.ExportReport, err error) error {
	v := exportVerdictJSON{Verdict: "invalid", Checks: []protocol.Check{}}
	if report != nil {
		v.Header, v.Entries, v.Checks = report.Header, report.Entries, report.Checks
		v.HMACsChecked, v.ChainSignatureChecked, v.KeyTrusted = report.HMACsChecked, report.ChainSignatureChecked, report.KeyTrusted
		if v.Checks == nil {
			v.Checks = []protocol.Check{}
		}
		if h := report.Header; h != nil {
			v.Format, v.FirstSeq, v.LastSeq = h.Format, h.FirstSeq, h.LastSeq
		}
		if report.Import != nil {
			v.Import = importLine(report.Import)
		}
	}
	if err == nil {
		v.Authenticated, v.Unauthenticated = report.Authenticated, report.Unauthenticated
		v.Valid = len(report.Unauthenticated) == 0
		v.Verdict = "valid"
		if !v.Valid {
			v.Verdict = "checks passed, not all authenticated"
		}
	} else {
		v.Error = err.Error()
	}
	return jsonVerdict(w, v, err)
}

// verifyLegacyExportJSON verifies the BIJOTEL export in and prints the verdict as
// writeExportReportJSON does.
func verifyLegacyExportJSON(w io.Writer, in io.Reader, secret []byte, pub ed25519.PublicKey) error {
	sum := sha256.New()
	report, err := bijotel.VerifyExport(io.TeeReader(in, sum), bijotel.VerifyOptions{Secret: secret, PublicKey: pub})
	if report == nil {
		return writeExportReportJSON(w, nil, err)
	}
	v := exportVerdictJSON{Verdict: report.Verdict, Valid: err == nil && report.Verdict == bijotel.VerdictValid,
		FirstSeq: report.FirstSeq, LastSeq: report.LastSeq, HMACsChecked: report.HMACsChecked,
		ChainSignatureChecked: report.ChainSignatureChecked, KeyTrusted: report.SignatureChecked,
		Checks: report.Checks, SHA256: hex.EncodeToString(sum.Sum(nil)), SignerFingerprint: report.SignerFingerprint, Notes: report.Notes}
	if env := report.Envelope; env != nil {
		v.Format, v.Entries = env.Format, env.Entries
	}
	if v.Checks == nil {
		v.Checks = []protocol.Check{}
	}
	if err != nil {
		v.Error = err.Error()
	}
	return jsonVerdict(w, v, err)
}

// jsonVerdict writes v and returns err as printed.
func jsonVerdict(w io.Writer, v exportVerdictJSON, err error) error {
	v.ExitCode = cmdutil.ExitCode(err)
	if werr := cmdutil.WriteJSON(w, v); werr != nil {
		return werr
	}
	if err != nil {
		return cmdutil.SilentError{Err: err}
	}
	return nil
}
