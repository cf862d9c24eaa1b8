package protocol

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
)

// VerifyReceiptLog checks offline that the log holding opts.Key recorded r's
// cross-anchor, after VerifyReceipt accepted r: r's tlog_entry is a LogBundle that
// VerifyLogBundle accepts, at r's tlog_log_index, whose body is the hashedrekord of
// CrossAnchorLogContent(r.CrossAnchorHash) under r's federation key. A receipt without a
// tlog_entry is ErrNotIncluded: the log leg is not done.
func VerifyReceiptLog(r *Receipt, opts LogVerifyOptions) error {
	if r.TLogEntry == nil {
		return fmt.Errorf("%w: the receipt has no tlog_entry yet", ErrNotIncluded)
	}
	dec := json.NewDecoder(bytes.NewReader(r.TLogEntry))
	dec.DisallowUnknownFields()
	var b LogBundle
	if err := dec.Decode(&b); err != nil {
		return fmt.Errorf("%w: tlog_entry: %w", ErrMalformed, err)
	}
	if r.TLogLogIndex == nil || *r.TLogLogIndex != b.LogIndex {
		got := "null"
		if r.TLogLogIndex != nil {
			got = strconv.FormatInt(*r.TLogLogIndex, 10)
		}
		return &MismatchError{Field: "tlog_log_index", Want: strconv.FormatInt(b.LogIndex, 10), Got: got}
	}
	body, err := VerifyLogBundle(&b, opts)
	if err != nil {
		return err
	}
	content, err := CrossAnchorLogContent(r.CrossAnchorHash)
	if err != nil {
		return err
	}
	fed, err := ParsePublicKeyPEM([]byte(r.FederationPublicKeyPEM))
	if err != nil {
		return err
	}
	return VerifyHashedRekord(body, content, fed)
}
