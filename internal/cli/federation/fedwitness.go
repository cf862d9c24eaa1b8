package federation

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/cairn-dev/cairn/pkg/protocol"
	"github.com/cairn-dev/cairn/pkg/witness"
)

// witnessChecks checks the checkpoint of a verified receipt's log proof: against the
// largest checkpoint of that log this machine verified before (the same size with another
// root is a split view, reported with both), and, when a witness policy is trusted, for
// its quorum of cosignatures. It adds a check line only for what it found wrong or was
// asked to check.
func witnessChecks(r *protocol.Receipt, keys *trustedKeys) ([]protocol.Check, error) {
	if len(r.TLogEntry) == 0 || r.TLogPublicKeyPEM == nil {
		if keys.witnesses == nil {
			return nil, nil
		}
		err := fmt.Errorf("%w: the receipt has no log proof whose checkpoint witnesses could have cosigned", witness.ErrNotWitnessed)
		return []protocol.Check{{Name: "witnesses", Detail: err.Error()}}, err
	}
	var b protocol.LogBundle
	if err := json.Unmarshal(r.TLogEntry, &b); err != nil {
		return nil, fmt.Errorf("%w: tlog_entry: %w", protocol.ErrMalformed, err)
	}
	logKey, err := protocol.ParseLogPublicKeyPEM([]byte(*r.TLogPublicKeyPEM))
	if err != nil {
		return nil, err
	}
	note := []byte(b.Verification.InclusionProof.Checkpoint)
	cp, err := protocol.OpenCheckpoint(note, logKey)
	if err != nil {
		return nil, err
	}
	if keys.seen != "" {
		if err := keys.seen.SeeCheckpoint(b.LogID, note, cp); err != nil {
			return []protocol.Check{{Name: "split_view", Detail: err.Error()}}, err
		}
	}
	if keys.witnesses == nil {
		return nil, nil
	}
	return checkCosignatures(keys.witnesses, keys.witnessesFrom, note, cp.Size)
}

// checkCosignatures is the "witnesses" check of a checkpoint of size under policy.
func checkCosignatures(policy *witness.Policy, from string, note []byte, size uint64) ([]protocol.Check, error) {
	v, err := policy.Check(note)
	if err != nil {
		return []protocol.Check{{Name: "witnesses", Detail: err.Error()}}, err
	}
	who := "no witness"
	if names := v.Witnessed(); len(names) > 0 {
		who = strings.Join(names, ", ")
	}
	detail := fmt.Sprintf("checkpoint of size %d cosigned by %s; %s asks %s", size, who, from, policy.Quorum())
	if !v.Satisfied {
		err := fmt.Errorf("%w: %s", witness.ErrNotWitnessed, detail)
		return []protocol.Check{{Name: "witnesses", Detail: detail}}, err
	}
	return []protocol.Check{{Name: "witnesses", OK: true, Detail: detail}}, nil
}
