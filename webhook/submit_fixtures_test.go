package webhook

import (
	"bytes"
	"crypto/ed25519"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/client"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

// chain is an operator's local chain, as `cairn export` reads it: real entries sealed
// with the chain secret, exported with the operator's key.
type chain struct {
	key     ed25519.PrivateKey
	secret  []byte
	entries []*protocol.Entry // entries[i] has seq i+1
}

// newChain seals n entries for key, under a secret of its own (label tells chains apart).
func newChain(key ed25519.PrivateKey, label string, n int) *chain {
	GinkgoHelper()
	c := &chain{key: key, secret: []byte(fmt.Sprintf("chain secret of %-16s", label))}
	Expect(c.grow(n, 32)).To(Succeed())
	return c
}

// grow seals n more entries, each with a prompt of promptBytes.
func (c *chain) grow(n, promptBytes int) error {
	sealer, err := protocol.NewEntrySealer(c.secret)
	if err != nil {
		return err
	}
	for range n {
		seq := int64(len(c.entries)) + 1
		prev := protocol.GenesisPrevHash
		if seq > 1 {
			prev = c.entries[seq-2].HMACHash
		}
		e, err := sealer.Seal(seq, prev, spanBody(seq, promptBytes))
		if err != nil {
			return err
		}
		c.entries = append(c.entries, e)
	}
	return nil
}

// spanBody is a model call of seq with a prompt of promptBytes.
func spanBody(seq int64, promptBytes int) protocol.SpanBody {
	start := time.Date(2026, 11, 24, 6, 0, 0, 0, time.UTC).UnixNano() + seq*int64(time.Second)
	return protocol.SpanBody{Name: "chat gpt-4o", Kind: "client", StatusCode: "OK", StartTimeNS: start, EndTimeNS: start + 1500,
		Attributes: map[string]any{"gen_ai.system": "openai", "gen_ai.prompt": string(bytes.Repeat([]byte{'p'}, promptBytes))},
		TraceID:    fmt.Sprintf("%032x", seq), SpanID: fmt.Sprintf("%016x", seq)}
}

// export is the signed export of entries first..last, exported at at.
func (c *chain) export(first, last int64, at time.Time) []byte {
	GinkgoHelper()
	var buf bytes.Buffer
	Expect(c.writeExport(&buf, first, last, at, c.key)).To(Succeed())
	return buf.Bytes()
}

// writeExport writes entries first..last to w, the envelope signed by key.
func (c *chain) writeExport(w io.Writer, first, last int64, at time.Time, key ed25519.PrivateKey) error {
	x, err := protocol.NewExportWriter(w, protocol.ExportOptions{Secret: c.secret, Key: key, ExportedAt: at})
	if err != nil {
		return err
	}
	for _, e := range c.entries[first-1 : last] {
		if err := x.Write(e); err != nil {
			return err
		}
	}
	_, err = x.Close()
	return err
}

// hmacAt is the hmac_hash of entry seq.
func (c *chain) hmacAt(seq int64) string { return c.entries[seq-1].HMACHash }

// exportTime is the exported_at of the specs' exports: whole seconds, now.
func exportTime() time.Time { return time.Now().UTC().Truncate(time.Second) }

// bodyToken is the bearer token of key for body, sent now.
func bodyToken(key ed25519.PrivateKey, body []byte) string {
	GinkgoHelper()
	return bodyTokenAt(key, body, time.Now())
}

// bodyTokenAt is bodyToken with the nonce dated at.
func bodyTokenAt(key ed25519.PrivateKey, body []byte, at time.Time) string {
	GinkgoHelper()
	tok, err := protocol.SignToken(key, protocol.BodyNonce(at, body))
	Expect(err).NotTo(HaveOccurred())
	return "Bearer " + tok
}

// submitAs posts body to /federation/submit on s with the Authorization header authz
// (none when empty).
func submitAs(s http.Handler, authz string, body []byte) answer {
	GinkgoHelper()
	req := httptest.NewRequest(http.MethodPost, "/federation/submit", bytes.NewReader(body)).WithContext(ctx)
	if authz != "" {
		req.Header.Set("Authorization", authz)
	}
	return record(s, req)
}

// submit posts body to s signed as an honest client signs it.
func submit(s http.Handler, key ed25519.PrivateKey, body []byte) answer {
	GinkgoHelper()
	return submitAs(s, bodyToken(key, body), body)
}

// record serves req on s and decodes the answer.
func record(s http.Handler, req *http.Request) answer {
	GinkgoHelper()
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, req)
	raw, _ := io.ReadAll(rec.Result().Body)
	a := answer{status: rec.Code, header: rec.Header(), raw: raw}
	if rec.Header().Get("Content-Type") == "application/json" {
		Expect(json.Unmarshal(raw, &a.body)).To(Succeed(), string(raw))
	}
	return a
}

// submitFed is the Federation the submit specs submit to, in a namespace of its own and
// never anchoring (like readFederation's), so that their submissions count in no other
// spec's answers; made on first use.
var submitFed = sync.OnceValue(newReadFederation)

// submitServer is a Server for submitFed with o's settings, without rate limits unless o
// sets them.
func submitServer(o Options) *Server {
	GinkgoHelper()
	o.Client, o.APIReader, o.Informers, o.Federation = mgr.GetClient(), mgr.GetAPIReader(), mgr.GetCache(), submitFed().key
	if o.RatePerSecond == 0 {
		o.RatePerSecond = -1
	}
	if o.OperatorRatePerSecond == 0 {
		o.OperatorRatePerSecond = -1
	}
	if o.RegistrationLimit == 0 {
		o.RegistrationLimit = -1
	}
	s, err := New(o)
	Expect(err).NotTo(HaveOccurred())
	return s
}

// submitOperator reads r's FederationOperator in submitFed's namespace from the API server.
func submitOperator(r registrant) *fv1.FederationOperator {
	GinkgoHelper()
	var fo fv1.FederationOperator
	Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: submitFed().key.Namespace,
		Name: operatorObjectName(r.key.Public().(ed25519.PublicKey))}, &fo)).To(Succeed())
	return &fo
}

// submissionsOf lists, past the cache, the Submissions of operator id in submitFed.
func submissionsOf(id string) []fv1.Submission {
	GinkgoHelper()
	var list fv1.SubmissionList
	Expect(k8sClient.List(ctx, &list, client.InNamespace(submitFed().key.Namespace))).To(Succeed())
	var own []fv1.Submission
	for _, s := range list.Items {
		if string(s.Spec.OperatorID) == id {
			own = append(own, s)
		}
	}
	return own
}

// idOf is the operator ID of r.
func idOf(r registrant) string { return protocol.OperatorID(r.key.Public().(ed25519.PublicKey)) }

// subName is the Submission name the API gives r's export starting at first.
func subName(r registrant, first int64) string {
	return "sub-" + idOf(r)[len("op_"):] + "-" + fmt.Sprint(first)
}
