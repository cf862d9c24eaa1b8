package main

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/pkg/protocol"
)

// A federation without a publicURL signs receipts whose tlog_url is "": audit cannot read
// their entry online unless told where the log is, and says so instead of failing.
func TestAuditLogWithoutLogURL(t *testing.T) {
	pub, _, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	keyPEM, err := protocol.MarshalPublicKeyPEM(pub)
	if err != nil {
		t.Fatal(err)
	}
	index, empty, keyText := int64(3), "", string(keyPEM)
	r := &protocol.Receipt{TLogLogIndex: &index, TLogURL: &empty, TLogPublicKeyPEM: &keyText}

	var a auditReport
	(&auditOptions{}).auditLog(context.Background(), &a, r, nil)
	if len(a.Checks) != 1 || !a.Checks[0].Skipped || !strings.Contains(a.Checks[0].Detail, "pass --log") {
		t.Fatalf("audit of a receipt with an empty tlog_url: %+v, want one skipped check naming --log", a.Checks)
	}

	a = auditReport{}
	(&auditOptions{log: "http://127.0.0.1:1/federation/log"}).auditLog(context.Background(), &a, r, nil)
	if len(a.Checks) != 1 || a.Checks[0].OK || a.Checks[0].Skipped {
		t.Fatalf("audit with a --log that does not answer: %+v, want a failure", a.Checks)
	}
}
