package protocol

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/cairn-dev/cairn/pkg/protocol/internal/jsonread"
)

// This file reads the few members of a canonical body that verification compares with
// the entry's columns, without decoding the rest. It is on the hot path of export
// verification, where encoding/json would cost several times the hashing.

// MaxBodyNesting bounds how deeply a canonical body may nest objects and arrays, counting
// the body object as level 0 and its attributes object as level 1: CheckEntry refuses an
// entry whose body nests a value deeper. Canonical JSON alone allows more, so code that
// builds bodies from nested input (OTLP's kvlist and array values) must stop at this.
const MaxBodyNesting = 512

// bodyColumns are the members of a span body that an entry repeats as columns.
type bodyColumns struct {
	name, kind, startTimeNS, traceID, spanID []byte
}

// bodyColumnNames are the members bodyColumns holds, in its order.
var bodyColumnNames = [...]string{"name", "kind", "start_time_ns", "trace_id", "span_id"}

// readBodyColumns parses body, which must be one JSON object, and returns its name, kind,
// start_time_ns, trace_id and span_id members, each of which must be a string. The rest
// of the body is read by the same rules and skipped.
func readBodyColumns(body []byte) (cols bodyColumns, err error) {
	defer func() {
		if errors.Is(err, jsonread.ErrDepth) {
			err = fmt.Errorf("%w: body nested deeper than %d levels", jsonread.ErrSyntax, MaxBodyNesting)
		}
	}()
	dsts := [...]*[]byte{&cols.name, &cols.kind, &cols.startTimeNS, &cols.traceID, &cols.spanID}
	rd := jsonread.NewBytes(body)
	rd.MaxDepth = MaxBodyNesting + 1 // the body object is level 1 of the reader's count
	if k, err := rd.Peek(); err != nil || k != jsonread.Object {
		return cols, fmt.Errorf("%w: body is not a JSON object", jsonread.ErrSyntax)
	}
	if err := rd.Begin(jsonread.Object); err != nil {
		return cols, err
	}
	var seen [len(bodyColumnNames)]bool
	for {
		key, ok, err := rd.Key()
		if err != nil {
			return cols, err
		}
		if !ok {
			break
		}
		slot := -1
		for i, name := range bodyColumnNames {
			if string(key) == name {
				slot = i
				break
			}
		}
		if slot < 0 {
			if err := rd.Skip(); err != nil {
				return cols, err
			}
			continue
		}
		if seen[slot] {
			return cols, fmt.Errorf("duplicate member %q", bodyColumnNames[slot])
		}
		seen[slot] = true
		if k, err := rd.Peek(); err != nil || k != jsonread.String {
			return cols, fmt.Errorf("member %q must be a string", bodyColumnNames[slot])
		}
		v, escaped, err := rd.String()
		if err != nil {
			return cols, err
		}
		if escaped { // decoded into the reader's scratch, which the next string reuses
			v = bytes.Clone(v)
		}
		*dsts[slot] = v
	}
	if err := rd.End(); err != nil {
		return cols, err
	}
	for i, ok := range seen {
		if !ok {
			return cols, fmt.Errorf("body has no %q member", bodyColumnNames[i])
		}
	}
	return cols, nil
}

// compare compares the entry's columns with the body's members c holds.
func (c *bodyColumns) compare(e *Entry) error {
	for _, col := range [...]struct {
		field, member string
		body          []byte
		column        string
	}{
		{"timestamp_ns", "start_time_ns", c.startTimeNS, e.TimestampNS},
		{"trace_id", "trace_id", c.traceID, e.TraceID},
		{"span_id", "span_id", c.spanID, e.SpanID},
		{"span_name", "name", c.name, e.SpanName},
		{"span_kind", "kind", c.kind, e.SpanKind},
	} {
		if col.body == nil {
			return fmt.Errorf("%w: body has no string member %q", ErrMalformed, col.member)
		}
		if string(col.body) != col.column {
			return &MismatchError{Field: col.field, Want: string(col.body), Got: col.column}
		}
	}
	return nil
}
