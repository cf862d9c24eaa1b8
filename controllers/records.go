package controllers

import (
	"context"
	"fmt"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

// namespaceFederation returns the Federation of a namespace: operators and submissions
// belong to the one Federation beside them.
func namespaceFederation(ctx context.Context, c client.Reader, namespace string) (*fv1.Federation, error) {
	var feds fv1.FederationList
	if err := c.List(ctx, &feds, client.InNamespace(namespace)); err != nil {
		return nil, err
	}
	if len(feds.Items) != 1 {
		return nil, fmt.Errorf("namespace %s has %d Federations, want 1", namespace, len(feds.Items))
	}
	return &feds.Items[0], nil
}

// logRecord logs a record (one of protocol's *Record types, whose Federation field it
// fills in) in the log of the namespace's Federation, signed by the federation key.
func logRecord(ctx context.Context, c client.Client, logs *Logs, namespace string, record func(federation string) any) (*fv1.LogEntry, error) {
	fed, err := namespaceFederation(ctx, c, namespace)
	if err != nil {
		return nil, err
	}
	key, _, err := federationKey(ctx, c, fed)
	if err != nil {
		return nil, err
	}
	body, err := protocol.NewRecordEntry(record(fed.Namespace+"/"+fed.Name), key)
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
	return logEntryOf(e), nil
}
