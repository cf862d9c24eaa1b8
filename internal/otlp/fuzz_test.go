package otlp_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"

	"github.com/cairn-dev/cairn/internal/otlp"
	"github.com/cairn-dev/cairn/pkg/chain"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

// validatingSealer seals nothing to disk, so that the fuzzer runs fast, but keeps the
// Sealer's contract: it refuses a whole batch with an error wrapping
// protocol.ErrMalformed when a body is one chain.ValidateSpanBody refuses, and otherwise
// counts the bodies.
type validatingSealer struct {
	mu     sync.Mutex
	sealed int
}

func (s *validatingSealer) Seal(_ context.Context, bodies []protocol.SpanBody) ([]*protocol.Entry, error) {
	for _, b := range bodies {
		if err := chain.ValidateSpanBody(b); err != nil {
			return nil, fmt.Errorf("%w: %w", protocol.ErrMalformed, err)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sealed += len(bodies)
	return nil, nil
}

// FuzzExport sends arbitrary bodies, as protobuf or as OTLP JSON, to the receiver. It
// answers 200 or 400 and never panics; a body it takes decodes with pdata, the reference,
// and every span of it is either sealed or counted as rejected; and what pdata decodes
// re-encodes to what it decodes again the same (the round trip the handler's answers
// rely on).
func FuzzExport(f *testing.F) {
	td := ptrace.NewTraces()
	spans := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans()
	for i, name := range []string{"chat gpt-4o", "no gen_ai"} {
		s := spans.AppendEmpty()
		s.SetName(name)
		s.SetTraceID([16]byte{1, byte(i)})
		s.SetSpanID([8]byte{2, byte(i)})
		s.SetStartTimestamp(1)
		s.SetEndTimestamp(2)
		if i == 0 {
			s.Attributes().PutStr("gen_ai.system", "openai")
			s.Attributes().PutEmptySlice("gen_ai.list").AppendEmpty().SetEmptyMap().PutInt("k", 1)
		}
	}
	req := ptraceotlp.NewExportRequestFromTraces(td)
	pb, err := req.MarshalProto()
	if err != nil {
		f.Fatal(err)
	}
	js, err := req.MarshalJSON()
	if err != nil {
		f.Fatal(err)
	}
	f.Add(pb, false)
	f.Add(js, true)
	f.Add([]byte{}, false)
	f.Add([]byte("{}"), true)
	f.Add(bytes.Repeat([]byte{0x5b}, 64), false)
	f.Fuzz(func(t *testing.T, body []byte, isJSON bool) {
		sealer := &validatingSealer{}
		h, err := otlp.NewHandler(sealer, otlp.WithLogger(slog.New(slog.DiscardHandler)))
		if err != nil {
			t.Fatal(err)
		}
		contentType := protobufType
		if isJSON {
			contentType = jsonType
		}
		r := httptest.NewRequest(http.MethodPost, "/v1/traces", bytes.NewReader(body))
		r.Header.Set("Content-Type", contentType)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)

		ref := ptraceotlp.NewExportRequest()
		if isJSON {
			err = ref.UnmarshalJSON(body)
		} else {
			err = ref.UnmarshalProto(body)
		}
		switch rec.Code {
		case http.StatusOK:
			if err != nil {
				t.Fatalf("the receiver took a body pdata refuses (%v)", err)
			}
			answer := ptraceotlp.NewExportResponse()
			if isJSON {
				err = answer.UnmarshalJSON(rec.Body.Bytes())
			} else {
				err = answer.UnmarshalProto(rec.Body.Bytes())
			}
			if err != nil {
				t.Fatalf("the answer %q does not decode: %v", rec.Body.Bytes(), err)
			}
			total := ref.Traces().SpanCount()
			if got := int64(sealer.sealed) + answer.PartialSuccess().RejectedSpans(); got != int64(total) {
				t.Fatalf("%d spans, %d sealed and %d rejected", total, sealer.sealed, answer.PartialSuccess().RejectedSpans())
			}
		case http.StatusBadRequest:
		default:
			t.Fatalf("answered %d: %q", rec.Code, rec.Body.Bytes())
		}
		if err != nil || isJSON {
			return
		}
		once, err := ref.MarshalProto()
		if err != nil {
			t.Fatalf("pdata decodes %x but does not re-encode it: %v", body, err)
		}
		again := ptraceotlp.NewExportRequest()
		if err := again.UnmarshalProto(once); err != nil {
			t.Fatalf("pdata does not decode its own encoding %x: %v", once, err)
		}
		if twice, err := again.MarshalProto(); err != nil || !bytes.Equal(once, twice) {
			t.Fatalf("pdata's encoding is not stable: %x then %x (%v)", once, twice, err)
		}
	})
}
