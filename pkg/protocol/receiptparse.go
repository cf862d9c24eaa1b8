package protocol

import (
	"encoding/json"
	"fmt"
	"strconv"
)

// This file reads a receipt's members for parseReceipt.

// parseLogMembers reads the log key members and enforces the format's null rules.
func parseLogMembers(p *parsedReceipt, byName map[string]json.RawMessage) error {
	r := p.receipt
	_, hasLogKey := byName[receiptLogKeyMember]
	_, hasRecordKey := byName[receiptRecordKeyMember]
	if hasLogKey != hasRecordKey {
		return fmt.Errorf("%w: a receipt has both %s and %s or neither", ErrMalformed, receiptLogKeyMember, receiptRecordKeyMember)
	}
	if !hasLogKey {
		r.Legacy = true
		return nil
	}
	var err error
	if r.TLogPublicKeyPEM, err = nullableStringMember(byName, receiptLogKeyMember); err != nil {
		return err
	}
	if r.TLogRecordPublicKeyPEM, err = nullableStringMember(byName, receiptRecordKeyMember); err != nil {
		return err
	}
	set := 0
	for _, present := range []bool{r.TLogLogIndex != nil, r.TLogURL != nil, r.TLogPublicKeyPEM != nil, r.TLogRecordPublicKeyPEM != nil} {
		if present {
			set++
		}
	}
	switch {
	case set != 0 && set != 4:
		return fmt.Errorf("%w: tlog_log_index, tlog_url, %s and %s are not all null or all non-null", ErrMalformed, receiptLogKeyMember, receiptRecordKeyMember)
	case (set == 4) != (r.TLogEntry != nil):
		return fmt.Errorf("%w: tlog_entry is present without the log members, or absent with them", ErrMalformed)
	case set == 0:
		return nil
	}
	if p.logKey, err = ParseLogPublicKeyPEM([]byte(*r.TLogPublicKeyPEM)); err != nil {
		return fmt.Errorf("%s: %w", receiptLogKeyMember, err)
	}
	if p.recordKey, err = ParsePublicKeyPEM([]byte(*r.TLogRecordPublicKeyPEM)); err != nil {
		return fmt.Errorf("%s: %w", receiptRecordKeyMember, err)
	}
	return nil
}

func jsonStringMember(m map[string]json.RawMessage, name string) (string, error) {
	v, ok := m[name]
	if !ok {
		return "", fmt.Errorf("%w: receipt member %s is missing", ErrMalformed, name)
	}
	return jsonString(name, v)
}

func nullableStringMember(m map[string]json.RawMessage, name string) (*string, error) {
	v, ok := m[name]
	switch {
	case !ok:
		return nil, fmt.Errorf("%w: receipt member %s is missing", ErrMalformed, name)
	case string(v) == "null":
		return nil, nil
	}
	s, err := jsonString(name, v)
	if err != nil {
		return nil, fmt.Errorf("%w: %s is neither a JSON string nor null", ErrMalformed, name)
	}
	return &s, nil
}

// logIndexMember reads tlog_log_index: null, or an integer from 0 to 2^53-1 (the bundle's
// logIndex it must equal is in RFC 8785 JSON, whose number rule bounds it so).
func logIndexMember(m map[string]json.RawMessage) (*int64, error) {
	v, ok := m["tlog_log_index"]
	switch {
	case !ok:
		return nil, fmt.Errorf("%w: receipt member tlog_log_index is missing", ErrMalformed)
	case string(v) == "null":
		return nil, nil
	}
	n, err := strconv.ParseInt(string(v), 10, 64)
	if err != nil || n < 0 || n > maxSafeInteger || string(v) == "-0" {
		return nil, fmt.Errorf("%w: tlog_log_index is neither an integer from 0 to 2^53-1 nor null", ErrMalformed)
	}
	return &n, nil
}

func participantsMember(v json.RawMessage) ([]Participant, error) {
	if v == nil {
		return nil, fmt.Errorf("%w: receipt member participating_operators is missing", ErrMalformed)
	}
	var elems []map[string]json.RawMessage
	if v[0] != '[' || json.Unmarshal(v, &elems) != nil {
		return nil, fmt.Errorf("%w: participating_operators is not an array of JSON objects", ErrMalformed)
	}
	ps := make([]Participant, len(elems))
	for i, obj := range elems {
		if obj == nil {
			return nil, fmt.Errorf("%w: participant %d is not a JSON object", ErrMalformed, i)
		}
		if len(obj) != 2 {
			return nil, fmt.Errorf("%w: participant %d has members other than operator_id and chain_signature", ErrMalformed, i)
		}
		var err error
		if ps[i].OperatorID, err = jsonStringMember(obj, "operator_id"); err != nil {
			return nil, fmt.Errorf("participant %d: %w", i, err)
		}
		if ps[i].ChainSignature, err = jsonStringMember(obj, "chain_signature"); err != nil {
			return nil, fmt.Errorf("participant %d: %w", i, err)
		}
	}
	if err := checkParticipants(ps); err != nil {
		return nil, err
	}
	return ps, nil
}
