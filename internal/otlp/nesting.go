package otlp

import (
	"errors"
	"fmt"

	"google.golang.org/protobuf/encoding/protowire"
)

// MaxWireNesting bounds how deeply a request body may nest attribute values (arrays and
// maps in one another); a JSON body may nest objects and arrays four times as deep (an
// OTLP JSON value level is three or four of them). The decoder recurses once a level,
// and a 16 MiB protobuf body nested 1.5 million deep overflowed the goroutine's 1 GB
// stack: a fatal error no recover() stops, which took the whole server down. Bodies
// deeper than this are refused (400) before they are decoded; spans whose values nest
// deeper than protocol.MaxBodyNesting (512) are refused one by one, as before.
const MaxWireNesting = 10_000

// maxJSONNesting is MaxWireNesting in JSON objects and arrays.
const maxJSONNesting = 4 * MaxWireNesting

// errTooDeep is wrapped by checkNesting's error for a body nested deeper than MaxWireNesting.
var errTooDeep = errors.New("request body nested too deeply")

// checkNesting refuses a body nested deeper than MaxWireNesting, in linear time and
// constant stack, before the decoder recurses through it.
func (e encoding) checkNesting(data []byte) error {
	if e == encodingJSON {
		return checkJSONNesting(data)
	}
	return checkProtoNesting(data)
}

// checkJSONNesting counts the depth of objects and arrays outside strings. It does not
// validate the JSON: the decoder does.
func checkJSONNesting(data []byte) error {
	depth, inString, escaped := 0, false, false
	for _, c := range data {
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == '{' || c == '[':
			if depth++; depth > maxJSONNesting {
				return fmt.Errorf("%w: more than %d levels of JSON objects and arrays", errTooDeep, maxJSONNesting)
			}
		case c == '}' || c == ']':
			depth--
		}
	}
	return nil
}

// message is one message type of ExportTraceServiceRequest on the paths to attribute
// values, which nest.
type message uint8

const (
	mRequest message = iota
	mResourceSpans
	mResource
	mScopeSpans
	mScope
	mSpan
	mEvent
	mLink
	mKeyValue
	mAnyValue
	mArrayValue
	mKeyValueList
)

// submessage returns the type of field num of msg when that field holds a message on
// those paths (opentelemetry-proto's trace/v1, resource/v1 and common/v1 field numbers).
// Other fields are skipped whole. A switch rather than a map: this runs once a field of
// every request, and map lookups were a fifth of checkProtoNesting's time.
func submessage(msg message, num protowire.Number) (message, bool) {
	switch {
	case msg == mRequest && num == 1: // resource_spans
		return mResourceSpans, true
	case msg == mResourceSpans && num == 1: // resource
		return mResource, true
	case msg == mResourceSpans && num == 2: // scope_spans
		return mScopeSpans, true
	case msg == mResource && num == 1: // attributes
		return mKeyValue, true
	case msg == mScopeSpans && num == 1: // scope
		return mScope, true
	case msg == mScopeSpans && num == 2: // spans
		return mSpan, true
	case msg == mScope && num == 3: // attributes
		return mKeyValue, true
	case msg == mSpan && num == 9: // attributes
		return mKeyValue, true
	case msg == mSpan && num == 11: // events
		return mEvent, true
	case msg == mSpan && num == 13: // links
		return mLink, true
	case msg == mEvent && num == 3: // attributes
		return mKeyValue, true
	case msg == mLink && num == 4: // attributes
		return mKeyValue, true
	case msg == mKeyValue && num == 2: // value
		return mAnyValue, true
	case msg == mAnyValue && num == 5: // array_value
		return mArrayValue, true
	case msg == mAnyValue && num == 6: // kvlist_value
		return mKeyValueList, true
	case msg == mArrayValue && num == 1: // values
		return mAnyValue, true
	case msg == mKeyValueList && num == 1: // values
		return mKeyValue, true
	}
	return 0, false
}

// checkProtoNesting walks the protobuf wire format of an ExportTraceServiceRequest with an
// explicit stack, and refuses it when its values nest deeper than MaxWireNesting, or
// when it is not well-formed wire format (the decoder would refuse it too).
func checkProtoNesting(data []byte) error {
	type frame struct {
		msg message
		end int
	}
	stack := []frame{{mRequest, len(data)}}
	values := 0 // the AnyValues on the stack
	malformed := func(at int) error {
		return fmt.Errorf("malformed protobuf at byte %d", at)
	}
	for i := 0; len(stack) > 0; {
		top := stack[len(stack)-1]
		if i == top.end {
			if top.msg == mAnyValue {
				values--
			}
			stack = stack[:len(stack)-1]
			continue
		}
		num, typ, n := protowire.ConsumeTag(data[i:top.end])
		if n < 0 {
			return malformed(i)
		}
		i += n
		if sub, ok := submessage(top.msg, num); ok && typ == protowire.BytesType {
			size, n := protowire.ConsumeVarint(data[i:top.end])
			if n < 0 || size > uint64(top.end-i-n) {
				return malformed(i)
			}
			i += n
			if sub == mAnyValue {
				if values++; values > MaxWireNesting {
					return fmt.Errorf("%w: attribute values nested more than %d levels", errTooDeep, MaxWireNesting)
				}
			}
			stack = append(stack, frame{sub, i + int(size)})
			continue
		}
		n = protowire.ConsumeFieldValue(num, typ, data[i:top.end])
		if n < 0 {
			return malformed(i)
		}
		i += n
	}
	return nil
}
