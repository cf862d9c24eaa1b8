package witness

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/cairn-dev/cairn/pkg/protocol"
)

// maxResponseBytes bounds what a witness's answer is read to.
const maxResponseBytes = 64 << 10

// ConflictError is a witness's answer that the old size of a request is not the size of
// the latest checkpoint it cosigned for the log: send the proof from Size.
type ConflictError struct {
	// Size is the size of the latest checkpoint the witness cosigned.
	Size uint64
}

func (e *ConflictError) Error() string {
	return fmt.Sprintf("the witness last cosigned a checkpoint of size %d", e.Size)
}

// RefusedError is any other refusal: the status and what the witness said.
type RefusedError struct {
	Status  int
	Message string
}

func (e *RefusedError) Error() string {
	return fmt.Sprintf("the witness refused the checkpoint: HTTP %d: %s", e.Status, e.Message)
}

// Client asks one witness for cosignatures (C2SP tlog-witness).
type Client struct {
	// Witness is the witness: its key checks the answer, its URL is the submission prefix.
	Witness Witness
	// HTTP sends the requests; nil is http.DefaultClient.
	HTTP *http.Client
}

// AddCheckpoint sends r and returns the witness's cosignature line of r.Checkpoint and
// when it was made, verified under the witness's key; lines of other keys in the answer
// are dropped. A 409 with the size media type is a *ConflictError, any other refusal a
// *RefusedError.
func (c *Client) AddCheckpoint(ctx context.Context, r *AddCheckpoint) ([]byte, time.Time, error) {
	text, _, err := protocol.ParseNote(r.Checkpoint)
	if err != nil {
		return nil, time.Time{}, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.Witness.URL+"/add-checkpoint", bytes.NewReader(r.Marshal()))
	if err != nil {
		return nil, time.Time{}, err
	}
	hc := c.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, time.Time{}, err
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes+1))
	if err != nil {
		return nil, time.Time{}, err
	}
	if len(body) > maxResponseBytes {
		return nil, time.Time{}, fmt.Errorf("witness %s: the answer is longer than %d bytes", c.Witness.Key.Name, maxResponseBytes)
	}
	switch {
	case resp.StatusCode == http.StatusConflict && resp.Header.Get("Content-Type") == ContentTypeSize:
		size, err := strconv.ParseUint(strings.TrimSuffix(string(body), "\n"), 10, 64)
		if err != nil {
			return nil, time.Time{}, fmt.Errorf("witness %s: a 409 whose size %q is not a number", c.Witness.Key.Name, body)
		}
		return nil, time.Time{}, &ConflictError{Size: size}
	case resp.StatusCode != http.StatusOK:
		return nil, time.Time{}, &RefusedError{Status: resp.StatusCode, Message: strings.TrimSpace(string(body))}
	}
	_, sigs, err := protocol.ParseNote(append(append([]byte(nil), r.Checkpoint...), body...))
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("witness %s: the answer is not signature lines: %w", c.Witness.Key.Name, err)
	}
	k := c.Witness.Key
	for _, sig := range sigs {
		if sig.Name != k.Name || sig.KeyHash != k.KeyHash() {
			continue
		}
		if t, ok := k.Verify(text, sig.Signature); ok {
			line := append(binaryKeyHash(sig.KeyHash), sig.Signature...)
			return fmt.Appendf(nil, "\u2014 %s %s\n", k.Name, base64.StdEncoding.EncodeToString(line)), t, nil
		}
	}
	return nil, time.Time{}, fmt.Errorf("witness %s: %w: the answer holds no valid cosignature of the checkpoint", k.Name, ErrBadCosignature)
}

func binaryKeyHash(h uint32) []byte {
	return []byte{byte(h >> 24), byte(h >> 16), byte(h >> 8), byte(h)}
}

// IsConflict returns the witness's size when err is a *ConflictError.
func IsConflict(err error) (uint64, bool) {
	var c *ConflictError
	if errors.As(err, &c) {
		return c.Size, true
	}
	return 0, false
}
