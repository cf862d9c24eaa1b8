package chain

import (
	"math"
	"strconv"

	"go.opentelemetry.io/otel/attribute"
)

// maxSafeInteger is 2^53−1: canonical JSON refuses integers beyond ±maxSafeInteger, and
// floats between it and 1e21 in magnitude, rather than round them.
const maxSafeInteger = 1<<53 - 1

// attributeMap converts OpenTelemetry attributes to a span body's attributes map. A key
// that occurs twice keeps its last value.
func attributeMap(kvs []attribute.KeyValue) map[string]any {
	m := make(map[string]any, len(kvs))
	for _, kv := range kvs {
		m[string(kv.Key)] = attributeValue(kv.Value)
	}
	return m
}

// attributeValue converts one OpenTelemetry value to the JSON value sealed for it; see
// SpanExporter for the rules.
func attributeValue(v attribute.Value) any {
	switch v.Type() {
	case attribute.BOOL:
		return v.AsBool()
	case attribute.INT64:
		return jsonInt(v.AsInt64())
	case attribute.FLOAT64:
		return jsonFloat(v.AsFloat64())
	case attribute.STRING:
		return v.AsString()
	case attribute.BOOLSLICE:
		return v.AsBoolSlice()
	case attribute.INT64SLICE:
		return int64Slice(v.AsInt64Slice())
	case attribute.FLOAT64SLICE:
		return float64Slice(v.AsFloat64Slice())
	case attribute.STRINGSLICE:
		return v.AsStringSlice()
	case attribute.BYTESLICE:
		return AttributeBytes(v.AsByteSlice())
	case attribute.SLICE:
		vs := v.AsSlice()
		out := make([]any, len(vs))
		for i, e := range vs {
			out[i] = attributeValue(e)
		}
		return out
	case attribute.MAP:
		return attributeMap(v.AsMap())
	default: // attribute.EMPTY, and any type added after this was written
		return nil
	}
}

// jsonInt returns n, or its decimal string when canonical JSON cannot hold it exactly.
func jsonInt(n int64) any {
	if n > maxSafeInteger || n < -maxSafeInteger {
		return strconv.FormatInt(n, 10)
	}
	return n
}

// jsonFloat returns f, or a string when canonical JSON cannot hold it: "NaN", "+Inf" or
// "-Inf" for the non-finite values, and the exact decimal integer for a magnitude above
// 2^53−1 and below 1e21.
func jsonFloat(f float64) any {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "+Inf"
	case math.IsInf(f, -1):
		return "-Inf"
	case math.Abs(f) > maxSafeInteger && math.Abs(f) < 1e21:
		return strconv.FormatFloat(f, 'f', -1, 64)
	}
	return f
}

// int64Slice returns ns as it is when every element can be held exactly, and otherwise
// a []any with jsonInt applied to each element.
func int64Slice(ns []int64) any {
	for _, n := range ns {
		if _, ok := jsonInt(n).(int64); !ok {
			out := make([]any, len(ns))
			for i, n := range ns {
				out[i] = jsonInt(n)
			}
			return out
		}
	}
	return ns
}

// float64Slice returns fs as it is when every element can be held, and otherwise a []any
// with jsonFloat applied to each element.
func float64Slice(fs []float64) any {
	for _, f := range fs {
		if _, ok := jsonFloat(f).(float64); !ok {
			out := make([]any, len(fs))
			for i, f := range fs {
				out[i] = jsonFloat(f)
			}
			return out
		}
	}
	return fs
}
