package controllers

import (
	"context"
	"crypto/ed25519"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
	"github.com/cairn-dev/cairn/internal/federation"
	"github.com/cairn-dev/cairn/pkg/protocol"
	"github.com/cairn-dev/cairn/pkg/protocol/canonical"
)

// logRecord logs a record (one of protocol's *Record types, whose Federation field it
// fills in) in the log of the namespace's Federation, signed by the federation key, and
// keeps its text in the Federation's record book.
func logRecord(ctx context.Context, c client.Client, logs *Logs, namespace string, record func(federation string) any) (*fv1.LogEntry, error) {
	fed, err := federation.NamespaceFederation(ctx, c, namespace)
	if err != nil {
		return nil, err
	}
	key, _, err := federationKey(ctx, c, fed)
	if err != nil {
		return nil, err
	}
	return logSignedRecord(ctx, c, logs, fed, key, record(fed.Namespace+"/"+fed.Name))
}

// logSignedRecord logs record in fed's log signed by key, which the caller chose (a key
// rotation's record is signed by the key it retires, whatever the cache says is current),
// and keeps its text in the record book.
func logSignedRecord(ctx context.Context, c client.Client, logs *Logs, fed *fv1.Federation, key ed25519.PrivateKey, record any) (*fv1.LogEntry, error) {
	content, err := canonical.Marshal(record)
	if err != nil {
		return nil, err
	}
	body, err := protocol.NewHashedRekord(content, key)
	if err != nil {
		return nil, err
	}
	log, err := logs.For(ctx, c, fed)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	e, err := log.Upload(ctx, body)
	observeUpload(start, err)
	if err != nil {
		return nil, err
	}
	// The text beside the log, before any status names the entry (recordbook.go).
	if err := logs.keep(fed, e, content); err != nil {
		return nil, err
	}
	return logEntryOf(e), nil
}
