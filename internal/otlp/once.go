package otlp

import (
	"context"

	"github.com/cairn-dev/cairn/internal/store"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

// onceSealer is a Sealer that can seal each span once (store.Store.SealOnce): a span
// whose trace and span ID it holds with the same content is skipped, one it holds with
// other content refused. A Handler whose Sealer is one seals through SealOnce.
type onceSealer interface {
	SealOnce(ctx context.Context, bodies []protocol.SpanBody) (*store.SealReport, error)
}

// sealBodies seals bodies with one call to the Sealer: through SealOnce when it has it,
// counting the refused spans in rejected.
func (h *Handler) sealBodies(ctx context.Context, bodies []protocol.SpanBody, rejected *rejections) error {
	o, ok := h.sealer.(onceSealer)
	if !ok {
		_, err := h.sealer.Seal(ctx, bodies)
		return err
	}
	r, err := o.SealOnce(ctx, bodies)
	if err != nil {
		return err
	}
	for _, c := range r.Conflicts {
		rejected.conflict(c)
	}
	return nil
}
