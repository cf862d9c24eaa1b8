package install

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
	rules "github.com/cairn-dev/cairn/internal/federation"
	cairnclient "github.com/cairn-dev/cairn/pkg/client"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

// story drives what the federation's controllers and API do, each step needing the
// manager's permissions: Acme registers through GitOps and Beta through the API, both
// submit, the admin anchors, each receipt is fetched once logged and verified offline
// under keys read from the cluster, the anchor verifies live, the public page renders,
// Beta rotates its key and submits under the new one, Acme withdraws and is refused, and
// the leader takes the week's log snapshot.
func (f *federation) story(ctx context.Context, t *testing.T) {
	f.acme = newOrganization(t, f, "Acme Research")
	if err := f.c.admin.Create(ctx, f.acme.registration(t, managedNamespace, "acme")); err != nil {
		t.Fatalf("GitOps registration of Acme: %v", err)
	}
	f.eventually(ctx, t, "Acme's FederationOperator is Active", func() error {
		var fo fv1.FederationOperator
		if err := f.c.admin.Get(ctx, client.ObjectKey{Namespace: managedNamespace, Name: "acme"}, &fo); err != nil {
			return err
		}
		if fo.Status.Phase != fv1.PhaseActive {
			return fmt.Errorf("phase %q", fo.Status.Phase)
		}
		return nil
	})
	beta := newOrganization(t, f, "Beta Labs")
	reg, err := f.anonymous(t).Register(ctx, beta.key, beta.org, "audit@beta.example")
	if err != nil || reg.OperatorID != beta.id {
		t.Fatalf("register Beta through the API: %+v, %v; want %s", reg, err, beta.id)
	}
	for _, o := range []*organization{f.acme, beta} {
		o.submit(ctx, t, 3)
	}

	admin, err := cairnclient.New(f.api, cairnclient.WithAdminToken(f.secretValue(ctx, t, f.fed.Name+"-admin", rules.AdminTokenSecretKey)))
	if err != nil {
		t.Fatal(err)
	}
	anchor, err := admin.Anchor(ctx)
	if err != nil || anchor.NoOp() || len(anchor.ParticipatingOperators) != 2 {
		t.Fatalf("POST /federation/anchor: %+v, %v; want an anchor of both operators", anchor, err)
	}
	fedKey, logKey := f.keys(ctx, t)
	for _, o := range []*organization{f.acme, beta} {
		raw := o.loggedReceipt(ctx, t, anchor.AnchorID)
		rep, err := protocol.VerifyReceiptWith(raw, protocol.ReceiptVerifyOptions{FederationKey: fedKey, LogKey: logKey})
		if err != nil {
			t.Fatalf("%s's receipt of %s: %v\n%+v", o.org, anchor.AnchorID, err, rep.Checks)
		}
		if last := rep.Checks[len(rep.Checks)-1]; last.Name != "tlog_entry" || !last.OK {
			t.Errorf("%s's receipt: the log check is %+v, want it passed", o.org, last)
		}
	}
	v, err := f.anonymous(t).VerifyAnchor(ctx, anchor.AnchorID)
	if err != nil || !v.Valid {
		t.Errorf("GET /federation/verify/%s: %+v, %v; want valid", anchor.AnchorID, v, err)
	}
	if code := f.get(ctx, t, "/"); code != http.StatusOK {
		t.Errorf("GET / (the public page): %d", code)
	}

	_, newKey, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := beta.api.RotateKey(ctx, newKey); err != nil {
		t.Fatalf("Beta's key rotation: %v", err)
	}
	beta.key = newKey
	beta.submit(ctx, t, 2)
	if _, err := f.acme.api.Withdraw(ctx); err != nil {
		t.Fatalf("Acme's withdrawal: %v", err)
	}
	f.acme.chain.seal(t, 1)
	if _, err := f.acme.api.Submit(ctx, f.acme.chain.export(t, f.acme.key, 4, 4)); !cairnclient.IsCode(err, "operator_withdrawn") {
		t.Errorf("a submission after Acme withdrew: %v, want 403 operator_withdrawn", err)
	}

	f.eventually(ctx, t, "the leader takes this week's log snapshot", func() error {
		snaps, err := f.anonymous(t).LogSnapshots(ctx)
		if err == nil && len(snaps.Snapshots) == 0 {
			err = fmt.Errorf("no snapshot yet")
		}
		return err
	})
}

// keys reads the federation's key and its log's key from the cluster, as an auditor
// who trusts the cluster's administrator would.
func (f *federation) keys(ctx context.Context, t *testing.T) (ed25519.PublicKey, any) {
	t.Helper()
	if err := f.c.admin.Get(ctx, client.ObjectKeyFromObject(f.fed), f.fed); err != nil {
		t.Fatal(err)
	}
	fedKey, err := protocol.ParsePublicKeyPEM([]byte(f.fed.Status.PublicKeyPEM))
	if err != nil {
		t.Fatal(err)
	}
	logPEM, err := rules.LogPublicKeyPEM(ctx, f.c.admin, f.fed)
	if err != nil {
		t.Fatal(err)
	}
	logKey, err := protocol.ParseLogPublicKeyPEM([]byte(logPEM))
	if err != nil {
		t.Fatal(err)
	}
	return fedKey, logKey
}

// anonymous is a client of the federation API with no credentials.
func (f *federation) anonymous(t *testing.T) *cairnclient.Client {
	t.Helper()
	c, err := cairnclient.New(f.api)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// organization is one operator: its key, its chain, and its client of the API.
type organization struct {
	f     *federation
	org   string
	key   ed25519.PrivateKey
	id    string
	chain *chain
	api   *cairnclient.Client
}

func newOrganization(t *testing.T, f *federation, org string) *organization {
	t.Helper()
	_, key, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	o := &organization{f: f, org: org, key: key, id: protocol.OperatorID(key.Public().(ed25519.PublicKey)),
		chain: &chain{secret: []byte(fmt.Sprintf("the chain secret of %-16s", org))}}
	if o.api, err = cairnclient.New(f.api, cairnclient.WithOperator(o.id, key)); err != nil {
		t.Fatal(err)
	}
	return o
}

// registration is o's FederationOperator as a GitOps repository holds it.
func (o *organization) registration(t *testing.T, namespace, name string) *fv1.FederationOperator {
	t.Helper()
	pub, err := protocol.MarshalPublicKeyPEM(o.key.Public().(ed25519.PublicKey))
	if err != nil {
		t.Fatal(err)
	}
	return &fv1.FederationOperator{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}, Spec: fv1.FederationOperatorSpec{
		OrgName: o.org, PublicKeyPEM: fv1.PublicKeyPEM(pub), ProofOfPossession: fv1.Signature(protocol.SignRegistration(o.key, o.org))}}
}

// submit seals n more entries and submits them, signed with o's current key.
func (o *organization) submit(ctx context.Context, t *testing.T, n int) {
	t.Helper()
	first := int64(len(o.chain.entries)) + 1
	o.chain.seal(t, n)
	res, err := o.api.Submit(ctx, o.chain.export(t, o.key, first, first+int64(n)-1))
	if err != nil || !res.Verified || !res.ContinuityVerified {
		t.Fatalf("%s submits entries %d..%d: %+v, %v; want them verified", o.org, first, first+int64(n)-1, res, err)
	}
}

// loggedReceipt fetches o's receipt of anchorID once it carries its log entry.
func (o *organization) loggedReceipt(ctx context.Context, t *testing.T, anchorID string) []byte {
	t.Helper()
	var found []byte
	o.f.eventually(ctx, t, o.org+"'s receipt of "+anchorID+" carries its log entry", func() error {
		page, err := o.api.Receipts(ctx, cairnclient.ReceiptsOptions{})
		if err != nil {
			return err
		}
		for _, raw := range page.Receipts {
			var r struct {
				AnchorID string          `json:"anchor_id"`
				Entry    json.RawMessage `json:"tlog_entry"`
			}
			if err := json.Unmarshal(raw, &r); err != nil {
				return err
			}
			if r.AnchorID == anchorID && len(r.Entry) > 0 && !bytes.Equal(r.Entry, []byte("null")) {
				found = raw
				return nil
			}
		}
		return fmt.Errorf("%d receipts, none of %s logged", len(page.Receipts), anchorID)
	})
	return found
}

// chain is an operator's local chain: entries sealed under its secret, entries[i] at
// seq i+1.
type chain struct {
	secret  []byte
	entries []*protocol.Entry
}

// seal seals n more model calls.
func (c *chain) seal(t *testing.T, n int) {
	t.Helper()
	sealer, err := protocol.NewEntrySealer(c.secret)
	if err != nil {
		t.Fatal(err)
	}
	for range n {
		seq := int64(len(c.entries)) + 1
		prev := protocol.GenesisPrevHash
		if seq > 1 {
			prev = c.entries[seq-2].HMACHash
		}
		start := time.Date(2026, 11, 26, 9, 0, 0, 0, time.UTC).UnixNano() + seq*int64(time.Second)
		e, err := sealer.Seal(seq, prev, protocol.SpanBody{Name: "chat", Kind: "client", StatusCode: "OK",
			StartTimeNS: start, EndTimeNS: start + 1500, Attributes: map[string]any{"gen_ai.request.model": "m"},
			TraceID: fmt.Sprintf("%032x", seq), SpanID: fmt.Sprintf("%016x", seq)})
		if err != nil {
			t.Fatal(err)
		}
		c.entries = append(c.entries, e)
	}
}

// export is the export of entries first..last, signed by key.
func (c *chain) export(t *testing.T, key ed25519.PrivateKey, first, last int64) []byte {
	t.Helper()
	var buf bytes.Buffer
	x, err := protocol.NewExportWriter(&buf, protocol.ExportOptions{Secret: c.secret, Key: key, ExportedAt: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range c.entries[first-1 : last] {
		if err := x.Write(e); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := x.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}
