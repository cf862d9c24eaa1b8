package webhook

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"testing"

	"github.com/cairn-dev/cairn/pkg/protocol"
	"github.com/cairn-dev/cairn/pkg/sidecar"
)

// jsonSidecars is a JSON-form body of n sidecars of size bytes each, and an empty export.
func jsonSidecars(n, size int) []byte {
	body := []byte(`{"sidecars":[`)
	for i := range n {
		if i > 0 {
			body = append(body, ',')
		}
		body = fmt.Appendf(body, `{"media_type":"text/plain","name":"s%d","content_b64":%q}`, i,
			base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{byte('a' + i)}, size)))
	}
	return append(body, `],"export":{}}`...)
}

// TestJSONFormChargesEveryByte: the JSON form's base64 is charged as the decoder reads
// it, and a refused charge stops the body, although the decoder reads data and error
// together and goes on with the data (it once did, and charged 3.5 of 11 MB).
func TestJSONFormChargesEveryByte(t *testing.T) {
	body := jsonSidecars(8, 1<<20)
	for _, tc := range []struct {
		budget int64
		want   string // the refusal, or "" for the body's own verdict
	}{{4 << 20, "sidecar_budget_exceeded"}, {16 << 20, ""}} {
		f := newInFlight(Options{OperatorSidecarBytesInFlight: tc.budget})
		place, err := f.admit("op_0000000000000001")
		if err != nil {
			t.Fatal(err)
		}
		in := &sidecarIntake{store: sidecar.NewStore(t.TempDir()), slot: place}
		_, err = readWrapped(bufio.NewReaderSize(bytes.NewReader(body), 512), protocol.VerifyOptions{}, in)
		var le limitError
		switch {
		case tc.want != "" && (!errors.As(err, &le) || le.code != tc.want || le.status != http.StatusTooManyRequests):
			t.Errorf("budget %d: %v; want %s", tc.budget, err, tc.want)
		case tc.want != "" && len(in.held) > 4:
			t.Errorf("budget %d: %d sidecars received past it", tc.budget, len(in.held))
		case tc.want == "" && (len(in.held) != 8 || f.held().bytes < int64(len(body))-1024):
			t.Errorf("budget %d: %d sidecars, %d bytes charged of %d (%v)", tc.budget, len(in.held), f.held().bytes, len(body), err)
		}
		if f.held().bytes > tc.budget {
			t.Errorf("budget %d: %d bytes charged, over it", tc.budget, f.held().bytes)
		}
		in.discard()
		place.release()
		place.release() // twice: nothing more
		if h := f.held(); h != (usage{}) || len(f.operator) != 0 {
			t.Errorf("after release: %+v, %d operators", h, len(f.operator))
		}
	}
}

// TestInFlightBoundsOperatorsAndTheReplica: an operator past its slots is 429, the replica
// past its slots 503, each answer with Retry-After; a released slot is free again.
func TestInFlightBoundsOperatorsAndTheReplica(t *testing.T) {
	f := newInFlight(Options{MaxSubmissionsInFlight: 3, MaxOperatorSubmissionsInFlight: 2})
	a1, err1 := f.admit("a")
	_, err2 := f.admit("a")
	_, err3 := f.admit("a")
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	var ae *apiError
	if !errors.As(err3, &ae) || ae.status != http.StatusTooManyRequests || ae.code != "too_many_submissions_in_flight" || ae.retryAfter <= 0 {
		t.Fatalf("third of one operator: %v", err3)
	}
	if _, err := f.admit("b"); err != nil {
		t.Fatal(err)
	}
	if _, err := f.admit("c"); !errors.As(err, &ae) || ae.status != http.StatusServiceUnavailable || ae.code != "server_busy" || ae.retryAfter <= 0 {
		t.Fatalf("fourth on the replica: %v", err)
	}
	a1.release()
	if _, err := f.admit("c"); err != nil {
		t.Fatalf("after a release: %v", err)
	}
}
