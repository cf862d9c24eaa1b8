package federation

import (
	"regexp"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
)

// requestIDPattern is the grammar of an anchor request's ID: short, and safe to show.
var requestIDPattern = regexp.MustCompile(`^[A-Za-z0-9._:+-]{1,128}$`)

// ValidAnchorRequestID reports whether id can name an anchor request: 1 to 128
// characters of [A-Za-z0-9._:+-].
func ValidAnchorRequestID(id string) bool { return requestIDPattern.MatchString(id) }

// PendingAnchorRequest returns the ID of the anchor request fed's annotation holds when
// the controller has not handled it yet, else "". An invalid ID is never pending: the
// controller does not run for it.
func PendingAnchorRequest(fed *fv1.Federation) string {
	id := fed.Annotations[fv1.AnchorRequestAnnotation]
	if !ValidAnchorRequestID(id) || AnchorRequestHandled(fed, id) {
		return ""
	}
	return id
}

// AnchorRequestHandled reports whether fed's status records the request id as handled.
func AnchorRequestHandled(fed *fv1.Federation, id string) bool {
	return fed.Status.AnchorRequest != nil && fed.Status.AnchorRequest.ID == id
}

// HandledAnchorRequest returns the record of request id in fed's status (the last
// request, or one of the recent ones), or nil when it is not handled, or so long ago that
// status no longer lists it.
func HandledAnchorRequest(fed *fv1.Federation, id string) *fv1.AnchorRequest {
	if AnchorRequestHandled(fed, id) {
		return fed.Status.AnchorRequest
	}
	for i := range fed.Status.RecentAnchorRequests {
		if fed.Status.RecentAnchorRequests[i].ID == id {
			return &fed.Status.RecentAnchorRequests[i]
		}
	}
	return nil
}
