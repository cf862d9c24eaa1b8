package webhook

import (
	"bufio"
	"bytes"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
	"github.com/cairn-dev/cairn/pkg/protocol"
	"github.com/cairn-dev/cairn/pkg/sidecar"
)

// fuzzBodyLimit is the body limit of FuzzRequestBodies.
const fuzzBodyLimit = 1 << 20

// fuzzRoutes are the routes whose bodies FuzzRequestBodies decodes, picked by the input's
// first byte: the three decoded as JSON objects, and submit, read as an export stream.
var fuzzRoutes = []string{"/federation/register", "/federation/withdraw", "/federation/rotate-key", "/federation/submit"}

// fuzzRequest is a request with body, read through the server's body limit.
func fuzzRequest(body []byte) *http.Request {
	r := httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(body))
	r.Body = http.MaxBytesReader(httptest.NewRecorder(), r.Body, fuzzBodyLimit)
	return r
}

// checkBodyError fails unless err is one of the documented body answers.
func checkBodyError(t *testing.T, route string, err error, codes ...string) {
	t.Helper()
	var ae *apiError
	if !errors.As(err, &ae) || !slices.Contains(codes, ae.code) || ae.message == "" {
		t.Fatalf("%s: error %v, want an apiError with one of %v", route, err, codes)
	}
}

// FuzzRequestBodies decodes arbitrary bodies as the federation API decodes each route's:
// the first byte picks the route. A JSON request it takes re-encodes to itself (decoded
// again it is the same value), and register's missing fields are sorted JSON names; an
// export submit takes verifies under the operator's key on its own; anything refused is
// the documented 400, 413 or 422 error.
func FuzzRequestBodies(f *testing.F) {
	_, key, err := ed25519.GenerateKey(nil)
	if err != nil {
		f.Fatal(err)
	}
	pubPEM, err := protocol.MarshalPublicKeyPEM(key.Public().(ed25519.PublicKey))
	if err != nil {
		f.Fatal(err)
	}
	c := &chain{key: key, secret: []byte("chain secret of fuzz            ")}
	if err := c.grow(3, 8); err != nil {
		f.Fatal(err)
	}
	var export bytes.Buffer
	if err := c.writeExport(&export, 1, 3, time.Date(2026, 11, 24, 7, 0, 0, 0, time.UTC), key); err != nil {
		f.Fatal(err)
	}
	f.Add(append([]byte{0}, `{"public_key_pem":"x","org_name":"Org","nonce":"n","nonce_signature":"s","proof_of_possession":"p"}`...))
	f.Add(append([]byte{0}, `{"org_name":""}`...))
	f.Add(append([]byte{1}, `{"operator_id":"op_1","at":"2026-11-21T14:00:00Z","signature":"c2ln"}`...))
	f.Add(append([]byte{2}, `{"operator_id":"op_1","new_public_key":"k","rotation_at":"t","old_key_signature":"a","new_key_signature":"b"}`...))
	f.Add(append([]byte{3}, export.Bytes()...))
	f.Add(append([]byte{3}, `{"format":"cairn-chain-v2"}`...))
	f.Add([]byte{2, '[', '[', '['})

	auth := &operatorAuth{
		operator: &fv1.FederationOperator{Status: fv1.FederationOperatorStatus{
			KeyHistory: []fv1.KeyRecord{{PublicKeyPEM: fv1.PublicKeyPEM(pubPEM)}}}},
		// A challenge nonce binds no body, so that every body reaches the export reader.
		token: &protocol.Token{Nonce: protocol.ChallengePrefix + strings.Repeat("A", 75)},
		now:   time.Now(),
	}
	store := sidecar.NewStore(f.TempDir())
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) == 0 {
			return
		}
		route, body := fuzzRoutes[int(data[0])%len(fuzzRoutes)], data[1:]
		var v, again any
		switch route {
		case "/federation/register":
			v, again = &registerRequest{}, &registerRequest{}
		case "/federation/withdraw":
			v, again = &withdrawRequest{}, &withdrawRequest{}
		case "/federation/rotate-key":
			v, again = &rotateKeyRequest{}, &rotateKeyRequest{}
		case "/federation/submit":
			intake := &sidecarIntake{store: store}
			defer intake.discard()
			report, err := readExport(fuzzRequest(body).Body, "application/json", auth, intake)
			if err != nil {
				checkBodyError(t, route, err, "malformed_json", "body_too_large", "export_verification_failed",
					"invalid_sidecar", "too_many_sidecars", "sidecar_too_large")
				return
			}
			if wrapped(bufio.NewReaderSize(bytes.NewReader(body), 512)) {
				return // the JSON form's export is checked by readWrapped's own tests
			}
			if _, err := protocol.VerifyExport(bytes.NewReader(body), protocol.VerifyOptions{PublicKey: currentPub(auth.operator)}); err != nil || report == nil {
				t.Fatalf("submit took an export that does not verify on its own: %v", err)
			}
			return
		}
		if err := decodeJSON(fuzzRequest(body), v); err != nil {
			checkBodyError(t, route, err, "malformed_json", "body_too_large")
			return
		}
		enc, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		if err := decodeJSON(fuzzRequest(enc), again); err != nil || !reflect.DeepEqual(v, again) {
			t.Fatalf("%s: %q decodes to %+v, which re-encodes as %s and decodes to %+v (%v)", route, body, v, enc, again, err)
		}
		if req, ok := v.(*registerRequest); ok {
			missing := req.missing()
			if !slices.IsSorted(missing) {
				t.Fatalf("missing fields %v are not sorted", missing)
			}
			for _, name := range missing {
				if !bytes.Contains(enc, []byte(`"`+name+`"`)) {
					t.Fatalf("missing field %q is not a member of the request %s", name, enc)
				}
			}
		}
	})
}
