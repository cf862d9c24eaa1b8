package controllers

import (
	"context"
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
	content, err := canonical.Marshal(record(fed.Namespace + "/" + fed.Name))
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
