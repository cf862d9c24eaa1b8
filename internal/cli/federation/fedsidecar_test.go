package federation

import (
	"bytes"
	"crypto/ed25519"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/cli/cmdutil"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

// TestSubmitSendsSidecars: `federation submit --sidecar` sends the export and two
// sidecars (one typed on the command line, one guessed from its extension) as one
// multipart body under a token that binds all of it; a ninth sidecar and one over 1 MiB
// are refused before anything is sent.
func TestSubmitSendsSidecars(t *testing.T) {
	f := newFakeFederation(t)
	dir := t.TempDir()
	priv, _, id := operatorKeys(t, dir)
	key, err := cmdutil.LoadPrivateKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	export := []byte(`{"format":"cairn-chain-v2","stand-in":"the fake does not verify it"}`)
	statement := []byte(`{"_type":"https://in-toto.io/Statement/v1"}`)
	card := []byte("# Model card\n")
	files := map[string][]byte{"export.json": export, "statement.intoto": statement, "card.md": card}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	type part struct{ name, mediaType, content string }
	var got []part
	f.routes["POST /federation/submit"] = func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		tok, err := protocol.ParseToken(strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer "))
		if err == nil {
			err = tok.Verify(key.Public().(ed25519.PublicKey))
		}
		if err == nil {
			err = tok.CheckBodyNonce(time.Now(), body, protocol.TokenMaxAge)
		}
		if err != nil {
			writeJSON(w, http.StatusUnauthorized, map[string]any{"error": "invalid_token", "message": err.Error()})
			return
		}
		mt, params, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
		if mt != "multipart/form-data" {
			writeJSON(w, http.StatusBadRequest, map[string]any{"error": "malformed_multipart", "message": mt})
			return
		}
		mr := multipart.NewReader(bytes.NewReader(body), params["boundary"])
		for {
			p, err := mr.NextPart()
			if err != nil {
				break
			}
			b, _ := io.ReadAll(p)
			got = append(got, part{p.FormName() + ":" + p.FileName(), p.Header.Get("Content-Type"), string(b)})
		}
		writeJSON(w, http.StatusOK, map[string]any{"submission_id": "sub-1", "operator_id": id, "verified": true,
			"continuity_verified": true, "first_seq": 1, "last_seq": 1, "entry_count": 1})
	}
	common := []string{"federation", "submit", "--service", f.URL, "--config-dir", t.TempDir(),
		"--operator-id", id, "--private-key", priv, "--export", filepath.Join(dir, "export.json")}
	out, err := runCairn(t, append(common, "--sidecar", filepath.Join(dir, "statement.intoto")+":application/vnd.in-toto+json; charset=utf-8",
		"--sidecar", filepath.Join(dir, "card.md"))...)
	if err != nil || !strings.Contains(out, "accepted sub-1") {
		t.Fatalf("submit --sidecar: %v\n%s", err, out)
	}
	want := []part{
		{"export:export.json", "application/octet-stream", string(export)},
		{"sidecar:statement.intoto", "application/vnd.in-toto+json; charset=utf-8", string(statement)},
		{"sidecar:card.md", "text/markdown", string(card)},
	}
	if len(got) != len(want) {
		t.Fatalf("parts %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("part %d: %+v, want %+v", i, got[i], want[i])
		}
	}

	big := filepath.Join(dir, "big.bin")
	if err := os.WriteFile(big, make([]byte, 1<<20+1), 0o600); err != nil {
		t.Fatal(err)
	}
	nine := append([]string(nil), common...)
	for range 9 {
		nine = append(nine, "--sidecar", filepath.Join(dir, "card.md"))
	}
	for _, args := range [][]string{append(append([]string(nil), common...), "--sidecar", big), nine} {
		before := f.requests("")
		out, err := runCairn(t, args...)
		if cmdutil.ExitCode(err) != cmdutil.ExitUsage || f.requests("") != before {
			t.Errorf("%s: exit %d, want %d with nothing sent\n%s", args[len(args)-1], cmdutil.ExitCode(err), cmdutil.ExitUsage, out)
		}
	}
}
