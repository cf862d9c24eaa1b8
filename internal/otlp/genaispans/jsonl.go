package genaispans

import (
	"strconv"
)

// The JSON Lines shape: one span a line as `cairn chain seal --file` reads it, of about
// 650 bytes, with the attributes a gen_ai instrumentation records, a prompt and a
// response. The CLI benchmarks (cmd/cairn) seal and verify these, and `make bench-compare`
// feeds the same lines to the re-stated original (hack/bijotel_restated.py). Every key is
// ASCII and every value an integer or a string of printable ASCII without '"' or '\\', so
// Python's json.dumps(sort_keys=True, separators=(",", ":"), ensure_ascii=False) writes
// them as RFC 8785 does.

// LineStartNS is the start time of line 0; line i starts i ms later and lasts 850 ms.
const LineStartNS = 1795262401000000000

// models are the (system, request model, response model) of the lines, in turn.
var models = [...][3]string{
	{"openai", "gpt-4o", "gpt-4o-2024-08-06"},
	{"anthropic", "claude-sonnet-4", "claude-sonnet-4-20250514"},
	{"openai", "gpt-4o-mini", "gpt-4o-mini-2024-07-18"},
	{"gcp.gemini", "gemini-2.0-flash", "gemini-2.0-flash-001"},
}

// prompts and responses are the texts of the lines, in turn (their counts are coprime
// with each other and with the models', so the combinations vary).
var prompts = [...]string{
	"Summarize the invoice items above 500 EUR.",
	"Translate the last message into German.",
	"Which refund rule applies after 45 days?",
	"Draft an apology with the new date.",
	"Is this ticket billing or shipping?",
}

var responses = [...]string{
	"Three items exceed 500 EUR.",
	"Rule 7: store credit only, minus 10 percent.",
	"Sorry: your parcel arrives on Thursday.",
	"billing: a duplicate March charge.",
	"Vielen Dank fuer Ihre Nachricht.",
	"The contract renews on 1 April.",
	"Error budget left: 41 percent.",
}

// AppendLine appends line i of the stream, ending in '\n', to dst: a chat span whose ids
// i makes unique.
func AppendLine(dst []byte, i int) []byte {
	m := models[i%len(models)]
	start := int64(LineStartNS) + int64(i)*1e6
	str := func(dst []byte, key, val string) []byte {
		dst = append(dst, '"')
		dst = append(dst, key...)
		dst = append(dst, `":"`...)
		dst = append(dst, val...)
		return append(dst, `",`...)
	}
	num := func(dst []byte, key string, val int64) []byte {
		dst = append(dst, '"')
		dst = append(dst, key...)
		dst = append(dst, `":`...)
		dst = strconv.AppendInt(dst, val, 10)
		return append(dst, ',')
	}
	dst = append(dst, `{"name":"chat `...)
	dst = append(dst, m[1]...)
	dst = append(dst, `","kind":"client","attributes":{`...)
	dst = str(dst, "gen_ai.operation.name", "chat")
	dst = str(dst, "gen_ai.system", m[0])
	dst = str(dst, "gen_ai.request.model", m[1])
	dst = str(dst, "gen_ai.response.model", m[2])
	dst = append(dst, `"gen_ai.response.id":"chatcmpl-`...)
	dst = strconv.AppendInt(dst, int64(i), 10)
	dst = append(dst, `",`...)
	dst = num(dst, "gen_ai.usage.input_tokens", int64(100+i%900))
	dst = num(dst, "gen_ai.usage.output_tokens", int64(20+i%400))
	dst = str(dst, "gen_ai.prompt", prompts[i%len(prompts)])
	dst = str(dst, "gen_ai.completion", responses[i%len(responses)])
	dst = append(dst, `"server.address":"api.example.invalid"},"status_code":"OK","status_description":"","start_time_ns":"`...)
	dst = strconv.AppendInt(dst, start, 10)
	dst = append(dst, `","end_time_ns":"`...)
	dst = strconv.AppendInt(dst, start+850e6, 10)
	dst = append(dst, `","trace_id":"`...)
	dst = appendHex(dst, uint64(i)+1, 32)
	dst = append(dst, `","span_id":"`...)
	dst = appendHex(dst, uint64(i)+1, 16)
	return append(dst, "\"}\n"...)
}

// appendHex appends n as width lowercase hex digits.
func appendHex(dst []byte, n uint64, width int) []byte {
	const digits = "0123456789abcdef"
	for k := width - 1; k >= 0; k-- {
		if k >= 16 {
			dst = append(dst, '0')
			continue
		}
		dst = append(dst, digits[n>>(4*uint(k))&0xf])
	}
	return dst
}
