package controllers

import (
	"bytes"
	"cmp"
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
	"github.com/cairn-dev/cairn/internal/atomicfile"
	"github.com/cairn-dev/cairn/internal/federation"
	"github.com/cairn-dev/cairn/internal/tlog"
	"github.com/cairn-dev/cairn/pkg/protocol"
	"github.com/cairn-dev/cairn/pkg/protocol/canonical"
)

// The record book. A log entry holds a record's SHA-512, not the record: the text of
// every record the federation logs (registrations, key rotations, withdrawals,
// suspensions and resumptions, federation key rotations) is kept beside the embedded
// log, in <log directory>/records/<log ID>/<log index>.json, the RFC 8785 JSON the entry
// signs, written once the log took it and before any status names the entry. A backup of
// the log's directory takes the book with it; a Federation on Rekor keeps its book at the
// same place on the log volume.
//
// The book is no evidence by itself: a text is believed only once the log holds an entry
// at its index whose hashedrekord is its SHA-512, signed by a key of the federation (the
// current key, one of the Federation's key history, or one a logged federation key
// rotation, signed by both keys, retired at a later index: records signed by such a key
// count up to that index). Texts that do not verify are left out, and logged. What the
// verified records say (federation.LoggedRecords) is how a restored federation keeps its
// verdicts: operator_restore.go and federation_restore.go.

// maxRecordBytes bounds one record's text; records are a few KiB at most.
const maxRecordBytes = 1 << 20

// recordFile names a record's text: its log index.
var recordFile = regexp.MustCompile(`^(0|[1-9][0-9]{0,18})\.json$`)

// bookKey names one Federation's book in one log.
type bookKey struct {
	fed   types.NamespacedName
	logID string
}

// recordBook is what a process has read and verified of one Federation's book.
type recordBook struct {
	dir     string
	log     tlog.Log
	modTime time.Time           // of dir when last read
	seen    map[string]struct{} // the file names read
	pending []bookRecord        // parsed, signed by no key trusted yet (or past the log)
	records []federation.LoggedRecord
	trusted map[fv1.PublicKeyPEM]int64 // federation key -> last log index it signs (-1: any)
	view    *federation.LoggedRecords
}

// bookRecord is one text of the book, parsed.
type bookRecord struct {
	index   int64
	content []byte
	record  any
}

// recordsDir is where fed's record book lives.
func (l *Logs) recordsDir(fed *fv1.Federation) string {
	return filepath.Join(l.Dir, fed.Namespace, fed.Name, "records")
}

// keep writes the text of a record the log took at entry into fed's book, and adds it to
// what this process has read of the book.
func (l *Logs) keep(fed *fv1.Federation, e *tlog.Entry, content []byte) error {
	dir := filepath.Join(l.recordsDir(fed), e.Bundle.LogID)
	name := strconv.FormatInt(e.Index, 10) + ".json"
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("record book: %w", err)
	}
	if err := atomicfile.Write(filepath.Join(dir, name), content, 0o600); err != nil {
		return fmt.Errorf("record book: %w", err)
	}
	l.booksMu.Lock()
	defer l.booksMu.Unlock()
	b := l.books[bookKey{client.ObjectKeyFromObject(fed), e.Bundle.LogID}]
	if b == nil {
		return nil // read whole at first use
	}
	if _, ok := b.seen[name]; ok {
		return nil
	}
	rec, err := parseRecord(content)
	if err != nil {
		return err
	}
	b.seen[name] = struct{}{}
	b.records = append(b.records, federation.LoggedRecord{Entry: *logEntryOf(e), Record: rec})
	b.view = federation.NewLoggedRecords(b.records)
	return nil
}

// Logged returns what fed's log records of its operators, from the texts of its book
// that verify against the log. It reads the log only for texts it has not read before:
// once per record in a process, at first use or after a restore put files in the book.
// An error means a text could not be checked (the log is down); nothing is left out
// silently.
func (l *Logs) Logged(ctx context.Context, c client.Client, fed *fv1.Federation) (*federation.LoggedRecords, error) {
	log, err := l.For(ctx, c, fed)
	if err != nil {
		return nil, err
	}
	l.booksMu.Lock()
	defer l.booksMu.Unlock()
	var b *recordBook
	for k, v := range l.books {
		if k.fed == client.ObjectKeyFromObject(fed) && v.log == log {
			b = v
		}
	}
	if b == nil {
		pub, err := log.PublicKey(ctx)
		if err != nil {
			return nil, err
		}
		logID, err := protocol.LogID(pub)
		if err != nil {
			return nil, err
		}
		b = &recordBook{dir: filepath.Join(l.recordsDir(fed), logID), log: log, seen: map[string]struct{}{},
			trusted: map[fv1.PublicKeyPEM]int64{}, view: federation.NewLoggedRecords(nil)}
		if l.books == nil {
			l.books = map[bookKey]*recordBook{}
		}
		l.books[bookKey{client.ObjectKeyFromObject(fed), logID}] = b
	}
	return b.refresh(ctx, fed)
}

// refresh reads and verifies the texts added to b's directory since it last looked, and
// those still pending once the federation trusts another key.
func (b *recordBook) refresh(ctx context.Context, fed *fv1.Federation) (*federation.LoggedRecords, error) {
	grew := false
	keys := []fv1.PublicKeyPEM{fed.Status.PublicKeyPEM}
	for _, k := range fed.Status.KeyHistory {
		keys = append(keys, k.PublicKeyPEM)
	}
	for _, k := range keys {
		if _, ok := b.trusted[k]; !ok && k != "" {
			b.trusted[k], grew = -1, true
		}
	}
	st, err := os.Stat(b.dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return b.view, nil
	case err != nil:
		return nil, fmt.Errorf("record book: %w", err)
	case st.ModTime().Equal(b.modTime) && (!grew || len(b.pending) == 0):
		return b.view, nil
	}
	files, err := os.ReadDir(b.dir)
	if err != nil {
		return nil, fmt.Errorf("record book: %w", err)
	}
	todo := b.pending
	for _, f := range files {
		name := f.Name()
		m := recordFile.FindStringSubmatch(name)
		if _, seen := b.seen[name]; seen || m == nil || !f.Type().IsRegular() {
			continue
		}
		b.seen[name] = struct{}{}
		r, err := readRecord(filepath.Join(b.dir, name), m[1])
		if err != nil {
			logf.FromContext(ctx).Info("Left a record of the record book out: it does not parse", "file", name, "error", err.Error())
			continue
		}
		todo = append(todo, r)
	}
	// Newest first: a federation key rotation, signed by the key it retires, is checked
	// before the records that key signed earlier.
	slices.SortFunc(todo, func(x, y bookRecord) int { return cmp.Compare(y.index, x.index) })
	for progress := true; progress && len(todo) > 0; {
		progress = false
		rest := todo[:0]
		for i, r := range todo {
			entry, ok, err := b.verify(ctx, r)
			switch {
			case err != nil: // the log is down: what is left waits for the next look
				b.pending = slices.Concat(rest, todo[i:])
				return nil, err
			case ok:
				b.records = append(b.records, federation.LoggedRecord{Entry: *logEntryOf(entry), Record: r.record})
				_, progress = r.record.(protocol.FederationKeyRotationRecord)
			default:
				rest = append(rest, r)
			}
		}
		todo = rest
	}
	for _, r := range todo {
		logf.FromContext(ctx).Info("Left a record of the record book out: no log entry signed by the federation holds it", "index", r.index)
	}
	b.pending = todo
	b.modTime = st.ModTime()
	b.view = federation.NewLoggedRecords(b.records)
	return b.view, nil
}

// verify checks r against the log: the entry at its index must be a hashedrekord of its
// text, signed by a key b trusts for that index. A federation key rotation that verifies
// makes its old key trusted up to its index. ok false with a nil error: not (yet) shown.
func (b *recordBook) verify(ctx context.Context, r bookRecord) (*tlog.Entry, bool, error) {
	e, err := b.log.Entry(ctx, r.index)
	if errors.Is(err, tlog.ErrNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	body, err := base64.StdEncoding.DecodeString(e.Bundle.Body)
	if err != nil {
		return nil, false, fmt.Errorf("log entry %d: %w", r.index, err)
	}
	if rot, isRotation := r.record.(protocol.FederationKeyRotationRecord); isRotation {
		if !b.trusts(fv1.PublicKeyPEM(rot.NewPublicKeyPEM), r.index) || !verifyFederationRotation(rot, body, r.content) {
			return nil, false, nil
		}
		if bound, ok := b.trusted[fv1.PublicKeyPEM(rot.OldPublicKeyPEM)]; !ok || (bound >= 0 && bound < r.index) {
			b.trusted[fv1.PublicKeyPEM(rot.OldPublicKeyPEM)] = r.index
		}
		return e, true, nil
	}
	for k := range b.trusted {
		if b.trusts(k, r.index) && protocol.VerifyHashedRekord(body, r.content, federation.MustKey(k)) == nil {
			return e, true, nil
		}
	}
	return nil, false, nil
}

// trusts reports whether k signs records at index.
func (b *recordBook) trusts(k fv1.PublicKeyPEM, index int64) bool {
	bound, ok := b.trusted[k]
	return ok && (bound < 0 || index <= bound)
}

// verifyFederationRotation reports whether rot, logged as body over content, is signed by
// both of its keys and logged under the old one.
func verifyFederationRotation(rot protocol.FederationKeyRotationRecord, body, content []byte) bool {
	oldPub, newPub := federation.MustKey(fv1.PublicKeyPEM(rot.OldPublicKeyPEM)), federation.MustKey(fv1.PublicKeyPEM(rot.NewPublicKeyPEM))
	if oldPub == nil || newPub == nil || protocol.VerifyHashedRekord(body, content, oldPub) != nil {
		return false
	}
	msg := protocol.RotationMessage(rot.NewPublicKeyPEM, rot.RotatedAt)
	return verifyB64(oldPub, msg, rot.OldKeySignature) && verifyB64(newPub, msg, rot.NewKeySignature)
}

// verifyB64 verifies a standard base64 Ed25519 signature.
func verifyB64(pub ed25519.PublicKey, msg []byte, sig string) bool {
	raw, err := base64.StdEncoding.DecodeString(sig)
	return err == nil && len(raw) == ed25519.SignatureSize && ed25519.Verify(pub, msg, raw)
}

// readRecord reads and parses the text of the record at index (decimal) in path.
func readRecord(path, index string) (bookRecord, error) {
	i, err := strconv.ParseInt(index, 10, 64)
	if err != nil {
		return bookRecord{}, err
	}
	f, err := os.Open(path)
	if err != nil {
		return bookRecord{}, err
	}
	defer func() { _ = f.Close() }()
	content, err := io.ReadAll(io.LimitReader(f, maxRecordBytes+1))
	if err != nil {
		return bookRecord{}, err
	}
	if len(content) > maxRecordBytes {
		return bookRecord{}, fmt.Errorf("over %d bytes", maxRecordBytes)
	}
	rec, err := parseRecord(content)
	if err != nil {
		return bookRecord{}, err
	}
	return bookRecord{index: i, content: content, record: rec}, nil
}

// parseRecord parses a record's text by its type. The text must be the record's RFC 8785
// JSON exactly, with no member the type lacks.
func parseRecord(content []byte) (any, error) {
	var head struct {
		Type string `json:"type"`
	}
	if err := json.Unmarshal(content, &head); err != nil {
		return nil, err
	}
	var rec any
	switch head.Type {
	case protocol.RecordRegistration:
		rec = &protocol.RegistrationRecord{}
	case protocol.RecordKeyRotation:
		rec = &protocol.KeyRotationRecord{}
	case protocol.RecordWithdrawal:
		rec = &protocol.WithdrawalRecord{}
	case protocol.RecordSuspension, protocol.RecordResumption:
		rec = &protocol.SuspensionRecord{}
	case protocol.RecordFederationKeyRotation:
		rec = &protocol.FederationKeyRotationRecord{}
	case protocol.RecordGenesis:
		rec = &protocol.GenesisRecord{}
	case protocol.RecordRename:
		rec = &protocol.RenameRecord{}
	default:
		return nil, fmt.Errorf("unknown record type %q", head.Type)
	}
	dec := json.NewDecoder(bytes.NewReader(content))
	dec.DisallowUnknownFields()
	if err := dec.Decode(rec); err != nil {
		return nil, err
	}
	again, err := canonical.Marshal(rec)
	if err != nil {
		return nil, err
	}
	if !bytes.Equal(again, content) {
		return nil, errors.New("not the record's RFC 8785 JSON")
	}
	switch r := rec.(type) {
	case *protocol.RegistrationRecord:
		return *r, nil
	case *protocol.KeyRotationRecord:
		return *r, nil
	case *protocol.WithdrawalRecord:
		return *r, nil
	case *protocol.SuspensionRecord:
		return *r, nil
	case *protocol.FederationKeyRotationRecord:
		return *r, nil
	case *protocol.RenameRecord:
		return *r, nil
	default:
		return *rec.(*protocol.GenesisRecord), nil
	}
}
