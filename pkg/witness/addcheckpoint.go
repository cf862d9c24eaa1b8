package witness

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
)

// ContentTypeSize is the media type of a witness's 409 answer that states the size of the
// latest checkpoint it cosigned for the log.
const ContentTypeSize = "text/x.tlog.size"

// MaxProofLines is the most consistency proof lines an add-checkpoint request carries.
const MaxProofLines = 63

// MaxRequestBytes bounds an add-checkpoint request: the old size line, 63 proof lines, and
// a checkpoint of at most 100 signature lines with room for extension lines.
const MaxRequestBytes = 64 << 10

// ErrMalformedRequest means an add-checkpoint request body is not in the C2SP syntax.
var ErrMalformedRequest = errors.New("malformed add-checkpoint request")

// AddCheckpoint is a C2SP tlog-witness add-checkpoint request: the size of the checkpoint
// the client believes the witness last cosigned, a consistency proof from that size to the
// new checkpoint's, and the new checkpoint note.
type AddCheckpoint struct {
	OldSize    uint64
	Proof      [][]byte
	Checkpoint []byte
}

// Marshal returns the request body.
func (r *AddCheckpoint) Marshal() []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "old %d\n", r.OldSize)
	for _, h := range r.Proof {
		b.WriteString(base64.StdEncoding.EncodeToString(h))
		b.WriteByte('\n')
	}
	b.WriteByte('\n')
	b.Write(r.Checkpoint)
	return b.Bytes()
}

// ParseAddCheckpoint reads a request body: "old <size>" without leading zeros, at most 63
// lines of base64 32-byte hashes, an empty line, then the checkpoint (whose own syntax the
// caller checks). Anything else is ErrMalformedRequest.
func ParseAddCheckpoint(body []byte) (*AddCheckpoint, error) {
	bad := func(what string) error { return fmt.Errorf("%w: %s", ErrMalformedRequest, what) }
	line, rest, ok := bytes.Cut(body, []byte{'\n'})
	size, found := bytes.CutPrefix(line, []byte("old "))
	if !ok || !found {
		return nil, bad(`the first line is not "old <size>"`)
	}
	old, err := strconv.ParseUint(string(size), 10, 64)
	if err != nil || (len(size) > 1 && size[0] == '0') {
		return nil, bad(fmt.Sprintf("the old size %q is not a decimal number without leading zeros", size))
	}
	r := &AddCheckpoint{OldSize: old}
	for {
		line, rest, ok = bytes.Cut(rest, []byte{'\n'})
		if !ok {
			return nil, bad("no empty line before the checkpoint")
		}
		if len(line) == 0 {
			break
		}
		if len(r.Proof) == MaxProofLines {
			return nil, bad(fmt.Sprintf("more than %d consistency proof lines", MaxProofLines))
		}
		h, err := base64.StdEncoding.Strict().DecodeString(string(line))
		if err != nil || len(h) != sha256.Size {
			return nil, bad(fmt.Sprintf("the proof line %q is not the base64 of a 32-byte hash", line))
		}
		r.Proof = append(r.Proof, h)
	}
	if old == 0 && len(r.Proof) > 0 {
		return nil, bad("a proof from size 0")
	}
	r.Checkpoint = rest
	return r, nil
}
