package tlog

import (
	"cmp"
	"context"
	"crypto"
	"crypto/ed25519"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/transparency-dev/merkle/rfc6962"
	"github.com/transparency-dev/tessera"
	"github.com/transparency-dev/tessera/storage/posix"
	"golang.org/x/sync/singleflight"

	"github.com/cairn-dev/cairn/pkg/protocol"
	"github.com/cairn-dev/cairn/pkg/witness"
)

// MaxEmbeddedEntry is the largest body the embedded log takes (the C2SP tlog-tiles
// limit, as tessera enforces it).
const MaxEmbeddedEntry = tessera.DefaultEntrySizeLimit

// EmbeddedOptions configures an Embedded log.
type EmbeddedOptions struct {
	// Dir holds the log: tessera's POSIX layout (checkpoint, tile/...) and the leaf index.
	Dir string
	// PrivateKey is the checkpoint signing key, a signed-note private key
	// ("PRIVATE+KEY+<origin>+..."; see GenerateLogKey). Its name is the log's origin.
	PrivateKey string
	// URL is where the log's tiles are served (see Embedded.Handler), recorded as each
	// entry's URL. Optional.
	URL string
	// BatchMaxAge is how long an entry may wait to be sequenced with others; default 50ms.
	BatchMaxAge time.Duration
	// CheckpointInterval is how often a new checkpoint is published; default and minimum
	// 100ms. An upload returns once a checkpoint covers its entry.
	CheckpointInterval time.Duration
	// Witnesses, when set, is the witness policy whose witnesses are asked to cosign each
	// new checkpoint (witnessing.go); Entry then proves against the latest checkpoint
	// whose cosignatures meet it, when that one covers the entry.
	Witnesses *witness.Policy
	// WitnessHTTP sends the witness requests; nil is http.DefaultClient.
	WitnessHTTP *http.Client
	// OnWitnessChange is called when a witness's status or the cosigned checkpoint
	// changes; it must not block.
	OnWitnessChange func()
	// Logger logs what goes wrong in the background; default slog.Default().
	Logger *slog.Logger
}

// Embedded is an append-only transparency log on tessera's POSIX storage. One process
// writes a directory at a time (tessera locks it; the leaf index assumes it).
type Embedded struct {
	opts    EmbeddedOptions
	pub     ed25519.PublicKey
	priv    ed25519.PrivateKey // signs entry timestamps; the same key signs checkpoints
	logID   string
	flight  singleflight.Group
	mu      sync.RWMutex // guards closed; held shared by every operation in flight
	closed  bool
	stop    context.CancelFunc
	add     tessera.AddFn
	reader  tessera.LogReader
	await   *tessera.PublicationAwaiter
	done    func(context.Context) error // tessera's shutdown
	index   *leafIndex
	behind  sync.Mutex // held while catching the index up
	lagging bool       // an upload gave up waiting: the index may miss its entry
	viewMu  sync.Mutex
	view    *checkpointView // the latest checkpoint read, verified
	witView *checkpointView // the latest cosigned checkpoint read, verified, meeting the policy

	witnessing *witnessing    // nil without a witness policy
	background sync.WaitGroup // the witnessing loop
}

// OpenEmbedded opens the log in opts.Dir, creating it if needed, and catches its leaf
// index up with it. A directory whose checkpoint opts.PrivateKey did not sign (a log
// restored without its key, or with another) is ErrKeyMismatch, and nothing is written.
func OpenEmbedded(ctx context.Context, opts EmbeddedOptions) (*Embedded, error) {
	signer, priv, err := parseLogKey(opts.PrivateKey)
	if err != nil {
		return nil, err
	}
	pub := priv.Public().(ed25519.PublicKey)
	opts.BatchMaxAge = cmp.Or(opts.BatchMaxAge, 50*time.Millisecond)
	opts.CheckpointInterval = max(opts.CheckpointInterval, 100*time.Millisecond)
	opts.Logger = cmp.Or(opts.Logger, slog.Default())
	if err := os.MkdirAll(opts.Dir, 0o700); err != nil {
		return nil, fmt.Errorf("embedded log: %w", err)
	}
	// Before tessera opens it: it would publish the tree it finds under this key.
	if err := checkOwnCheckpoint(opts.Dir, pub); err != nil {
		return nil, err
	}
	logID, err := protocol.LogID(pub)
	if err != nil {
		return nil, err
	}
	l := &Embedded{opts: opts, pub: pub, priv: priv, logID: logID}
	// tessera's background work lives as long as the log, not as long as ctx.
	life, stop := context.WithCancel(context.WithoutCancel(ctx))
	driver, err := posix.New(life, posix.Config{Path: opts.Dir})
	if err != nil {
		stop()
		return nil, fmt.Errorf("embedded log: %w", err)
	}
	appender, done, reader, err := tessera.NewAppender(life, driver, tessera.NewAppendOptions().
		WithCheckpointSigner(signer).
		WithBatching(tessera.DefaultBatchMaxSize, opts.BatchMaxAge).
		WithCheckpointInterval(opts.CheckpointInterval))
	if err != nil {
		stop()
		return nil, fmt.Errorf("embedded log %s: %w", opts.Dir, err)
	}
	l.stop, l.add, l.reader, l.done = stop, appender.Add, reader, done
	l.await = tessera.NewPublicationAwaiter(life, reader.ReadCheckpoint, 20*time.Millisecond)
	if l.index, err = openLeafIndex(filepath.Join(opts.Dir, "leaf-index.db")); err != nil {
		_ = l.Close(ctx)
		return nil, err
	}
	if err := l.index.catchUp(ctx, reader); err != nil {
		_ = l.Close(ctx)
		return nil, fmt.Errorf("embedded log: catch the leaf index up: %w", err)
	}
	if opts.Witnesses != nil {
		l.witnessing = newWitnessing(l, opts.Witnesses, opts.WitnessHTTP, opts.OnWitnessChange)
		l.background.Go(func() { l.witnessing.run(life, opts.CheckpointInterval) })
	}
	return l, nil
}

// Close publishes what has been sequenced and stops the log. Later calls return
// *UnavailableError.
func (l *Embedded) Close(ctx context.Context) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil
	}
	l.closed = true
	err := l.done(ctx)
	l.stop()
	l.background.Wait()
	if l.index != nil {
		err = errors.Join(err, l.index.close())
	}
	return err
}

// open holds the log open for an operation; release with l.mu.RUnlock.
func (l *Embedded) open(op string) error {
	l.mu.RLock()
	if l.closed {
		l.mu.RUnlock()
		return &UnavailableError{Op: op, Err: errors.New("the embedded log is closed")}
	}
	return nil
}

// Upload records body and returns its entry once a checkpoint covers it.
func (l *Embedded) Upload(ctx context.Context, body []byte) (*Entry, error) {
	if len(body) > MaxEmbeddedEntry {
		return nil, &RefusedError{Message: fmt.Sprintf("entry is %d bytes, the limit is %d", len(body), MaxEmbeddedEntry)}
	}
	if err := l.open("upload"); err != nil {
		return nil, err
	}
	defer l.mu.RUnlock()
	leaf := rfc6962.DefaultHasher.HashLeaf(body)
	// One upload of a body at a time, so that two cannot both miss the index and add it.
	v, err, _ := l.flight.Do(string(leaf), func() (any, error) { return l.sequence(ctx, body, leaf) })
	if err != nil {
		return nil, err
	}
	at := v.(indexed)
	return l.entry(ctx, at.index, body, at.integrated)
}

// indexed is where and when the log integrated an entry.
type indexed struct {
	index      int64
	integrated time.Time
}

// sequence returns body's index, adding it to the log if the log does not hold it, and
// waits until a checkpoint covers it.
func (l *Embedded) sequence(ctx context.Context, body, leaf []byte) (indexed, error) {
	if err := l.catchUpIfLagging(ctx); err != nil {
		return indexed{}, &UnavailableError{Op: "upload", Err: err}
	}
	found, ok, err := l.index.lookup(ctx, leaf)
	if err != nil {
		return indexed{}, &UnavailableError{Op: "upload", Err: err}
	}
	if ok {
		return found, nil
	}
	if err := l.writable(); err != nil {
		return indexed{}, &UnavailableError{Op: "upload", Err: err}
	}
	future := l.add(ctx, tessera.NewEntry(body))
	i, err := future()
	if err != nil {
		// The entry may still be sequenced after ctx ended: look before adding it again.
		l.setLagging()
		return indexed{}, &UnavailableError{Op: "upload", Err: err}
	}
	at := indexed{int64(i.Index), time.Unix(time.Now().Unix(), 0)}
	if err := l.index.put(ctx, leaf, at); err != nil {
		l.setLagging()
		return indexed{}, &UnavailableError{Op: "upload", Err: err}
	}
	if _, _, err := l.await.Await(ctx, func() (tessera.Index, error) { return i, nil }); err != nil {
		return indexed{}, &UnavailableError{Op: "await checkpoint", Err: err}
	}
	if l.witnessing != nil {
		l.witnessing.poke()
	}
	return at, nil
}

func (l *Embedded) setLagging() {
	l.behind.Lock()
	l.lagging = true
	l.behind.Unlock()
}

// catchUpIfLagging catches the leaf index up after an upload gave up half-way.
func (l *Embedded) catchUpIfLagging(ctx context.Context) error {
	l.behind.Lock()
	defer l.behind.Unlock()
	if !l.lagging {
		return nil
	}
	if err := l.index.catchUp(ctx, l.reader); err != nil {
		return err
	}
	l.lagging = false
	return nil
}

// PublicKey returns the checkpoint signing key.
func (l *Embedded) PublicKey(context.Context) (crypto.PublicKey, error) { return l.pub, nil }

// Verify checks b offline against the log's key, requiring a signed entry timestamp.
func (l *Embedded) Verify(_ context.Context, b *protocol.LogBundle) ([]byte, error) {
	return protocol.VerifyLogBundle(b, protocol.LogVerifyOptions{Key: l.pub})
}

// Reachable returns nil while the log is open and its checkpoint readable.
func (l *Embedded) Reachable(ctx context.Context) error {
	if err := l.open("reach"); err != nil {
		return err
	}
	defer l.mu.RUnlock()
	if _, err := l.reader.ReadCheckpoint(ctx); err != nil {
		return &UnavailableError{Op: "read checkpoint", Err: err}
	}
	return nil
}
