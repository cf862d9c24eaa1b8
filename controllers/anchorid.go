package controllers

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
)

// This file names anchors: anchor-YYYYMMDD-NNN, in the order they are made.

// nextAnchorID returns anchor-YYYYMMDD-NNN for the day of now: one more than the day's
// highest trusted anchor in the namespace, than the last anchor fed's status names (which
// may be gone: its ID is never given again), and than fed's AnchorsAfterAnnotation,
// skipping names that something else took.
func (r *FederationReconciler) nextAnchorID(ctx context.Context, fed *fv1.Federation, now time.Time) (string, error) {
	prefix := "anchor-" + now.Format("20060102") + "-"
	after, err := anchorsAfter(fed, prefix)
	if err != nil {
		return "", err
	}
	anchors, err := anchorMetadata(ctx, r.APIReader, fed.Namespace)
	if err != nil {
		return "", err
	}
	taken := map[string]bool{}
	next := 1
	for i := len(anchors) - 1; i >= 0; i-- { // newest first
		name := anchors[i].Name
		n, err := strconv.Atoi(strings.TrimPrefix(name, prefix))
		if err != nil || !strings.HasPrefix(name, prefix) {
			continue
		}
		taken[name] = true
		if next == 1 {
			trusted, err := r.trusted(ctx, r.APIReader, fed, &anchors[i])
			if err != nil {
				return "", err
			}
			if trusted {
				next = n + 1
			}
		}
	}
	next = max(next, after+1)
	if last := fed.Status.LastAnchor; last != nil && strings.HasPrefix(string(last.AnchorID), prefix) {
		if n, err := strconv.Atoi(strings.TrimPrefix(string(last.AnchorID), prefix)); err == nil {
			next = max(next, n+1)
		}
	}
	for taken[fmt.Sprintf("%s%03d", prefix, next)] {
		next++
	}
	if next > 999 {
		return "", fmt.Errorf("%s999 is taken: no more anchors today", prefix)
	}
	return fmt.Sprintf("%s%03d", prefix, next), nil
}

// anchorsAfter returns the sequence number that fed's AnchorsAfterAnnotation sets for the
// day of prefix ("anchor-YYYYMMDD-"): 0 when it is absent or names an earlier day.
func anchorsAfter(fed *fv1.Federation, prefix string) (int, error) {
	id, ok := fed.Annotations[fv1.AnchorsAfterAnnotation]
	if !ok {
		return 0, nil
	}
	bad := fmt.Errorf("annotation %s: %q is not an anchor ID of today or earlier: no anchor is made until it is", fv1.AnchorsAfterAnnotation, id)
	if len(id) != len(prefix)+3 || !strings.HasPrefix(id, "anchor-") || id[len(prefix)-1] != '-' {
		return 0, bad
	}
	if _, err := time.Parse("20060102", id[len("anchor-"):len(prefix)-1]); err != nil {
		return 0, bad
	}
	seq := id[len(prefix):]
	n, err := strconv.Atoi(seq)
	switch day := id[:len(prefix)]; {
	case err != nil || strings.Trim(seq, "0123456789") != "":
		return 0, bad
	case day > prefix: // a day after now: an ID before it could be one it names
		return 0, bad
	case day < prefix:
		return 0, nil
	}
	return n, nil
}

// anchorMetadata lists the metadata of the CrossAnchors in namespace, in name order
// (which is the order anchors are made in).
func anchorMetadata(ctx context.Context, from client.Reader, namespace string, opts ...client.ListOption) ([]metav1.PartialObjectMetadata, error) {
	list := &metav1.PartialObjectMetadataList{}
	list.SetGroupVersionKind(fv1.GroupVersion.WithKind("CrossAnchorList"))
	if err := from.List(ctx, list, append(opts, client.InNamespace(namespace))...); err != nil {
		return nil, err
	}
	slices.SortFunc(list.Items, func(a, b metav1.PartialObjectMetadata) int { return strings.Compare(a.Name, b.Name) })
	return list.Items, nil
}
