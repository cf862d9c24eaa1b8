package manager

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/cairn-dev/cairn/internal/history"
)

// HistoryNone keeps every record an object: no history store.
const HistoryNone = "none"

// HistoryOptions chooses the federation's history store, where finished records move
// once their Federation's retention passed (controllers/history.go).
type HistoryOptions struct {
	// Store is history.SQLite (the default), history.Postgres or HistoryNone.
	Store string
	// DSN is the SQLite file, or PostgreSQL's connection string; "" with SQLite means
	// <log-dir>/_history.db, beside the logs it belongs with.
	DSN string
	// DSNFile names a file holding the DSN (a mounted Secret, so that a password is no
	// flag); it wins over DSN.
	DSNFile string
	// Interval is how often the leader moves finished records; 0 means
	// the controllers' DefaultHistoryInterval.
	Interval time.Duration
}

// addHistoryFlags binds o's history options to fs.
func (o *Options) addHistoryFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.History.Store, "history-store", o.History.Store,
		"where anchored records go once their Federation's spec.history.retention passed: sqlite, postgres (several replicas), or none (they stay objects)")
	fs.StringVar(&o.History.DSN, "history-dsn", o.History.DSN,
		"the SQLite file (default <log-dir>/_history.db), or PostgreSQL's connection string (prefer --history-dsn-file)")
	fs.StringVar(&o.History.DSNFile, "history-dsn-file", o.History.DSNFile,
		"a file holding --history-dsn, such as a mounted Secret's key")
	fs.DurationVar(&o.History.Interval, "history-interval", o.History.Interval,
		"how often the leader moves finished records to the history store")
}

// validateHistory reports a history store option that cannot work.
func (o *Options) validateHistory() error {
	switch o.History.Store {
	case history.SQLite: // without a DSN, its file goes in --log-dir, which cairn dev sets after validating
	case history.Postgres:
		if o.History.DSN == "" && o.History.DSNFile == "" {
			return errors.New("--history-store postgres needs --history-dsn-file (or --history-dsn)")
		}
	case HistoryNone, "":
	default:
		return fmt.Errorf("--history-store %q: want %s, %s or %s", o.History.Store, history.SQLite, history.Postgres, HistoryNone)
	}
	if o.History.Interval < 0 {
		return fmt.Errorf("--history-interval %s: must not be negative", o.History.Interval)
	}
	return nil
}

// openHistory opens the history store o names, closed when mgr stops; nil for none.
func (o *Options) openHistory(ctx context.Context, mgr manager.Manager) (*history.Store, error) {
	h := o.History
	if h.Store == "" || h.Store == HistoryNone {
		return nil, nil
	}
	dsn := h.DSN
	if h.DSNFile != "" {
		raw, err := os.ReadFile(h.DSNFile)
		if err != nil {
			return nil, fmt.Errorf("--history-dsn-file: %w", err)
		}
		dsn = strings.TrimSpace(string(raw))
	}
	if dsn == "" && h.Store == history.SQLite {
		if o.LogDir == "" {
			return nil, errors.New("--history-store sqlite needs --history-dsn or --log-dir to put its file in")
		}
		if err := os.MkdirAll(o.LogDir, 0o700); err != nil {
			return nil, fmt.Errorf("history store: %w", err)
		}
		dsn = filepath.Join(o.LogDir, "_history.db")
	}
	store, err := history.Open(ctx, history.Options{Driver: h.Store, DSN: dsn, OnTampered: func(kind, name string, err error) {
		mgr.GetLogger().Error(err, "A record of the history store does not verify: it was changed outside the federation, and is not served",
			"kind", kind, "name", name)
	}})
	if err != nil {
		return nil, err
	}
	if err := mgr.Add(manager.RunnableFunc(func(ctx context.Context) error {
		<-ctx.Done()
		return store.Close()
	})); err != nil {
		return nil, errors.Join(err, store.Close())
	}
	return store, nil
}
