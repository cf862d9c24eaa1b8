package federation

import (
	"cmp"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

// What the log says of the operators. Every registration, key rotation, withdrawal,
// suspension and resumption is a record the federation signs and logs (controllers/
// records.go); its text is kept beside the log (the record book), so that when the
// FederationOperators are gone, or come back older than the log (a restore), the verdicts
// are rebuilt from the log rather than made again: a key rotated out stays out, a
// withdrawal stays final, a suspension stays. LoggedRecords is that view, built from
// records the caller has verified against the log (controllers/recordbook.go): each text's
// SHA-512 is the digest of a log entry signed by a key of the federation.

// LoggedRecord is one record of a federation's log whose text was verified against its
// entry.
type LoggedRecord struct {
	// Entry is the record's log entry.
	Entry fv1.LogEntry
	// Record is the record: a protocol.RegistrationRecord, KeyRotationRecord,
	// WithdrawalRecord or SuspensionRecord. Others (genesis, federation key rotations)
	// say nothing of operators and are ignored.
	Record any
}

// LoggedOperator is what the log records of one operator, in the forms its status keeps.
type LoggedOperator struct {
	// OperatorID is the operator's ID: that of its first key.
	OperatorID fv1.OperatorID
	// Registration is its registration record; RegistrationEntry where the log holds it.
	Registration      protocol.RegistrationRecord
	RegistrationEntry fv1.LogEntry
	// Keys are the keys it held, oldest first, each rotated to with a logged record; the
	// last is its current key. The first key's LogEntry is empty (RegistrationEntry
	// records it), as in a status.
	Keys []fv1.KeyRecord
	// Withdrawal is its signed withdrawal, once logged at WithdrawalEntry.
	Withdrawal      *protocol.Withdrawal
	WithdrawalEntry *fv1.LogEntry
	// Suspension is its last logged suspension or resumption; nil when none was logged.
	Suspension *fv1.SuspensionRecord
}

// CurrentKey is the key the log says o holds now.
func (o *LoggedOperator) CurrentKey() fv1.PublicKeyPEM { return o.Keys[len(o.Keys)-1].PublicKeyPEM }

// KeyIndex returns the position in o.Keys of the key whose operator ID is id, -1 when o
// never held it.
func (o *LoggedOperator) KeyIndex(id string) int {
	return slices.IndexFunc(o.Keys, func(k fv1.KeyRecord) bool { return KeyID(k.PublicKeyPEM) == id })
}

// LoggedRecords is what a federation's log records of its operators: who registered
// which key, every rotation, withdrawal and the last suspension or resumption.
type LoggedRecords struct {
	operators map[fv1.OperatorID]*LoggedOperator
	holders   map[string]fv1.OperatorID // key ID -> the operator that held it
}

// NewLoggedRecords applies records in log order. A record that does not follow from the
// ones before it is ignored: a second registration of an ID, a rotation from a key that
// is not the operator's current one or to a key any operator held, a record of an
// operator never registered, anything after a withdrawal.
func NewLoggedRecords(records []LoggedRecord) *LoggedRecords {
	l := &LoggedRecords{operators: map[fv1.OperatorID]*LoggedOperator{}, holders: map[string]fv1.OperatorID{}}
	sorted := slices.SortedFunc(slices.Values(records), func(a, b LoggedRecord) int { return cmp.Compare(a.Entry.LogIndex, b.Entry.LogIndex) })
	for _, r := range sorted {
		switch rec := r.Record.(type) {
		case protocol.RegistrationRecord:
			l.register(rec, r.Entry)
		case protocol.KeyRotationRecord:
			l.rotate(rec, r.Entry)
		case protocol.WithdrawalRecord:
			if o := l.live(rec.OperatorID); o != nil {
				w, entry := rec.Withdrawal, r.Entry
				o.Withdrawal, o.WithdrawalEntry = &w, &entry
			}
		case protocol.SuspensionRecord:
			if o := l.live(rec.OperatorID); o != nil {
				o.Suspension = suspensionOf(rec, r.Entry)
			}
		}
	}
	return l
}

// register applies a registration record.
func (l *LoggedRecords) register(rec protocol.RegistrationRecord, entry fv1.LogEntry) {
	id := KeyID(fv1.PublicKeyPEM(rec.PublicKeyPEM))
	if id == "" || id != rec.OperatorID || l.holders[id] != "" {
		return
	}
	at := entryTime(entry)
	l.operators[fv1.OperatorID(id)] = &LoggedOperator{OperatorID: fv1.OperatorID(id), Registration: rec, RegistrationEntry: entry,
		Keys: []fv1.KeyRecord{keyRecord(fv1.PublicKeyPEM(rec.PublicKeyPEM), at, nil)}}
	l.holders[id] = fv1.OperatorID(id)
}

// rotate applies a key rotation record.
func (l *LoggedRecords) rotate(rec protocol.KeyRotationRecord, entry fv1.LogEntry) {
	o := l.live(rec.OperatorID)
	newID := KeyID(fv1.PublicKeyPEM(rec.NewPublicKeyPEM))
	if o == nil || newID == "" || l.holders[newID] != "" || o.CurrentKey() != fv1.PublicKeyPEM(rec.OldPublicKeyPEM) {
		return
	}
	at := entryTime(entry)
	if t, err := time.Parse(time.RFC3339, rec.ValidFrom); err == nil {
		at = metav1.NewTime(t)
	}
	o.Keys[len(o.Keys)-1].ValidUntil = &at
	o.Keys = append(o.Keys, keyRecord(fv1.PublicKeyPEM(rec.NewPublicKeyPEM), at, &entry))
	l.holders[newID] = o.OperatorID
}

// live returns the registered, not withdrawn operator id; nil when there is none.
func (l *LoggedRecords) live(id string) *LoggedOperator {
	o := l.operators[fv1.OperatorID(id)]
	if o == nil || o.Withdrawal != nil {
		return nil
	}
	return o
}

// Holder returns the operator the log says holds or held the key whose operator ID is
// id; nil when the log records none.
func (l *LoggedRecords) Holder(id string) *LoggedOperator {
	if l == nil || l.holders[id] == "" {
		return nil
	}
	return l.operators[l.holders[id]]
}

// Operator returns what the log records of the operator id; nil when it never
// registered.
func (l *LoggedRecords) Operator(id fv1.OperatorID) *LoggedOperator {
	if l == nil {
		return nil
	}
	return l.operators[id]
}

// APISuspensions returns the suspensions through the admin API the log says are in
// force: each operator, not withdrawn, whose last record is a suspension naming the
// "api" source, ordered by operator ID. The reason is the record's, less the GitOps
// reason it was joined with (gitopsReason gives the reason spec.suspendedOperators now
// states for an operator, "" for none), since GitOps restores its own.
func (l *LoggedRecords) APISuspensions(gitopsReason func(fv1.OperatorID) string) []fv1.APISuspension {
	var out []fv1.APISuspension
	for id, o := range l.operators {
		s := o.Suspension
		if o.Withdrawal != nil || s == nil || s.Action != fv1.ActionSuspend || !slices.Contains(s.Sources, fv1.SuspensionSourceAPI) {
			continue
		}
		reason := s.Reason
		if g := gitopsReason(id); g != "" && slices.Contains(s.Sources, fv1.SuspensionSourceGitOps) && reason != g {
			reason = strings.TrimPrefix(reason, g+"; ")
		}
		at, _ := time.Parse(time.RFC3339, string(s.At))
		out = append(out, fv1.APISuspension{OperatorSuspension: fv1.OperatorSuspension{OperatorID: id, Reason: reason},
			SuspendedAt: metav1.NewTime(at)})
	}
	slices.SortFunc(out, func(a, b fv1.APISuspension) int { return strings.Compare(string(a.OperatorID), string(b.OperatorID)) })
	return out
}

// suspensionOf is the status form of a logged suspension or resumption.
func suspensionOf(rec protocol.SuspensionRecord, entry fv1.LogEntry) *fv1.SuspensionRecord {
	action := fv1.ActionSuspend
	if rec.Type == protocol.RecordResumption {
		action = fv1.ActionResume
	}
	return &fv1.SuspensionRecord{Action: action, At: fv1.Timestamp(rec.At), Reason: rec.Reason,
		Sources: slices.Clone(rec.Sources), LogEntry: &entry}
}

// keyRecord is the status form of a key held from at, rotated to at entry (nil for a
// first key).
func keyRecord(pemText fv1.PublicKeyPEM, at metav1.Time, entry *fv1.LogEntry) fv1.KeyRecord {
	k := fv1.KeyRecord{PublicKeyPEM: pemText, ValidFrom: at, LogEntry: entry}
	if pub, err := protocol.ParsePublicKeyPEM([]byte(pemText)); err == nil {
		k.Fingerprint = fv1.Hash(protocol.Fingerprint(pub))
	}
	return k
}

// entryTime is when the log integrated entry; the zero time when it does not say.
func entryTime(entry fv1.LogEntry) metav1.Time {
	if entry.IntegratedTime == nil {
		return metav1.Time{}
	}
	return *entry.IntegratedTime
}
