package webhook

import (
	"errors"
	"fmt"
	"io"
	"net/http"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
	"github.com/cairn-dev/cairn/pkg/sidecar"
)

// heldSidecar is one sidecar received from a request: in the store's temporary file, not
// yet kept.
type heldSidecar struct {
	name, mediaType string
	file            *sidecar.Incoming
}

// sidecarIntake receives one submission's sidecars into the store's temporary files,
// charged to the submission's slot. Nothing it receives is kept unless keep is called
// (once the submission is accepted); discard removes the rest, whatever happened.
type sidecarIntake struct {
	store *sidecar.Store // nil: the federation has no sidecar directory
	slot  *slot
	held  []heldSidecar
}

// chunk is how much of a sidecar is charged and written at a time.
const chunk = 32 << 10

// receive streams one sidecar's content into a temporary file: its media type checked
// and its name cleaned first, each chunk charged to the slot before it is written when
// charge is set (the JSON form charges the base64 as it is read instead). A sidecar
// over MaxBytes, the ninth, a budget crossed or a store missing is refused at once.
func (in *sidecarIntake) receive(mediaType, name string, content io.Reader, charge bool) error {
	index := len(in.held)
	if index == sidecar.MaxCount {
		return tooManySidecars()
	}
	if in.store == nil {
		return limitError{&apiError{status: http.StatusServiceUnavailable, code: "sidecars_not_configured",
			message: "this federation has no sidecar directory: send the export without sidecars"}}
	}
	mt, err := sidecar.CheckMediaType(mediaType)
	if err != nil {
		return invalidSidecar(index, err.Error())
	}
	file, err := in.store.Incoming()
	if err != nil {
		return err
	}
	in.held = append(in.held, heldSidecar{name: sidecar.CleanName(name), mediaType: mt, file: file})
	buf := make([]byte, chunk)
	for {
		n, rerr := content.Read(buf)
		if n > 0 {
			if charge {
				if err := in.charge(int64(n)); err != nil {
					return err
				}
			}
			if _, err := file.Write(buf[:n]); errors.Is(err, sidecar.ErrTooLarge) {
				return sidecarTooLarge(index)
			} else if err != nil {
				return err
			}
		}
		if errors.Is(rerr, io.EOF) {
			return nil
		}
		if rerr != nil {
			return budgetOr(rerr, malformedMultipart(rerr.Error()))
		}
	}
}

// charge counts n bytes against the submission's budgets.
func (in *sidecarIntake) charge(n int64) error {
	if n <= 0 || in.slot == nil {
		return nil
	}
	return in.slot.charge(n)
}

// records is what the Submission records of the sidecars received.
func (in *sidecarIntake) records() []fv1.SubmissionSidecar {
	if len(in.held) == 0 {
		return nil
	}
	out := make([]fv1.SubmissionSidecar, 0, len(in.held))
	for _, h := range in.held {
		out = append(out, fv1.SubmissionSidecar{Digest: fv1.Hash(h.file.Digest()), MediaType: h.mediaType,
			Size: h.file.Size(), Name: h.name})
	}
	return out
}

// keep moves every sidecar received into the store under its digest.
func (in *sidecarIntake) keep() error {
	for _, h := range in.held {
		if err := in.store.Promote(h.file); err != nil {
			return fmt.Errorf("keep sidecar %s: %w", h.file.Digest(), err)
		}
	}
	return nil
}

// discard removes the temporary files of the sidecars not kept.
func (in *sidecarIntake) discard() {
	for _, h := range in.held {
		h.file.Discard()
	}
}
