package bijotel_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"os/exec"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/bijotel/bijoteltest"
	"github.com/cairn-dev/cairn/pkg/bijotel"
)

// TestBijotelExportWriterMatchesPython has Python's standard library write the same rows
// as the original's export_chain does (testdata/export_v1.py recomputes every hash from
// the bodies and the secret) and requires the Go writer's bytes to be identical: layout,
// escaping (non-ASCII, astral, controls, quotes, DEL), created_at, segment, no final
// newline.
func TestBijotelExportWriterMatchesPython(t *testing.T) {
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 is not on PATH")
	}
	odd := []string{"chat 東京 \U0001F600", "tab\there \"q\" back\\slash \x7f\x01 </script>", "é"}
	cases := []struct {
		name      string
		firstSeq  int64
		n         int
		segment   bool
		createdAt time.Time
	}{
		{"whole_chain", 1, 9, false, bijoteltest.CreatedAt},
		{"segment_whole_seconds", 6, 7, true, time.Date(2026, 9, 10, 3, 45, 1, 999, time.UTC)},
		{"segment_from_seq_1", 1, 4, true, time.Date(2026, 9, 10, 3, 45, 1, 1000, time.UTC)},
		{"empty", 1, 0, false, bijoteltest.CreatedAt},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			spec := bijoteltest.ExportSpec{Format: bijotel.FormatV1, FirstSeq: tc.firstSeq, N: tc.n, Segment: tc.segment, Extra: 2}
			rows := bijoteltest.ExportRows(bijoteltest.Secret(), spec)
			for i := range rows {
				rows[i].SpanName = odd[i%len(odd)] + rows[i].SpanName
			}
			h := bijoteltest.ExportHeader(bijoteltest.Secret(), spec, rows)
			h.CreatedAt = tc.createdAt
			var got bytes.Buffer
			if err := bijotel.WriteExport(&got, h, rows); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(python, "testdata/export_v1.py")
			cmd.Stdin = bytes.NewReader(pythonInput(t, rows, tc.createdAt, h.Segment))
			want, err := cmd.Output()
			if err != nil {
				t.Fatalf("python: %v", err)
			}
			if !bytes.Equal(got.Bytes(), want) {
				t.Fatalf("Go writer differs from Python's json.dumps(indent=2):\ngo:\n%s\npython:\n%s", got.Bytes(), want)
			}
			if _, err := bijotel.VerifyExport(bytes.NewReader(want), bijotel.VerifyOptions{Secret: bijoteltest.Secret()}); err != nil {
				t.Fatalf("Python's export does not verify: %v", err)
			}
		})
	}
}

func pythonInput(t *testing.T, rows []bijotel.Row, createdAt time.Time, seg *bijotel.Segment) []byte {
	t.Helper()
	type row struct {
		Seq              int64   `json:"seq"`
		TimestampNS      int64   `json:"timestamp_ns"`
		TraceID          string  `json:"trace_id"`
		SpanID           string  `json:"span_id"`
		SpanName         string  `json:"span_name"`
		SpanKind         *string `json:"span_kind"`
		BodyB64          string  `json:"body_b64"`
		SemanticBodyHash *string `json:"semantic_body_hash"`
	}
	in := struct {
		SecretHex     string `json:"secret_hex"`
		CreatedAtUS   int64  `json:"created_at_us"`
		FirstPrevHash string `json:"first_prev_hash"`
		Rows          []row  `json:"rows"`
		Segment       any    `json:"segment"`
	}{SecretHex: bijoteltest.SecretHex, CreatedAtUS: createdAt.UnixMicro(), FirstPrevHash: bijotel.GenesisHash, Rows: []row{}}
	if len(rows) > 0 {
		in.FirstPrevHash = rows[0].PrevHash
	}
	for _, r := range rows {
		in.Rows = append(in.Rows, row{r.Seq, r.TimestampNS, r.TraceID, r.SpanID, r.SpanName, r.SpanKind,
			base64.StdEncoding.EncodeToString(r.CanonicalBody), r.SemanticBodyHash})
	}
	if seg != nil {
		in.Segment = map[string]int64{"total_in_full_chain": seg.TotalInFullChain}
	}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
