// Package witnesstest runs Cairn witnesses on local ports, for the tests of the packages
// that send them checkpoints: each can be stopped (its port refuses connections) and
// started again on the same address with the same state, as a witness that went down and
// came back.
package witnesstest

import (
	"crypto/rand"
	"errors"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"sync"

	"github.com/cairn-dev/cairn/internal/witnessd"
	"github.com/cairn-dev/cairn/pkg/witness"
)

// Witness is a running (or stopped) witness.
type Witness struct {
	// Name is its key name; VerifierKey its cosignature/v1 verifier key; URL its address.
	Name, VerifierKey, URL string

	opts witnessd.Options
	addr string
	mu   sync.Mutex
	w    *witnessd.Witness
	srv  *http.Server
}

// Start starts a witness named name that witnesses the log of logVerifierKey, keeping its
// state in dir.
func Start(name, logVerifierKey, dir string) (*Witness, error) {
	lk, err := witness.ParseLogKey(logVerifierKey)
	if err != nil {
		return nil, err
	}
	skey, vkey, err := witness.GenerateSignerKey(name, rand.Reader)
	if err != nil {
		return nil, err
	}
	c, err := witness.ParseSignerKey(skey)
	if err != nil {
		return nil, err
	}
	w := &Witness{Name: name, VerifierKey: vkey, addr: "127.0.0.1:0",
		opts: witnessd.Options{Cosigner: c, Logs: []witness.LogKey{lk}, StatePath: filepath.Join(dir, name+".db")}}
	if err := w.Restart(); err != nil {
		return nil, err
	}
	w.URL = "http://" + w.addr
	return w, nil
}

// Restart starts a stopped witness again, on its address, with its state.
func (w *Witness) Restart() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.srv != nil {
		return errors.New("witnesstest: the witness runs")
	}
	l, err := net.Listen("tcp", w.addr)
	if err != nil {
		return err
	}
	wd, err := witnessd.Open(w.opts)
	if err != nil {
		_ = l.Close()
		return err
	}
	w.addr, w.w = l.Addr().String(), wd
	w.srv = &http.Server{Handler: wd.Handler()}
	go func() { _ = w.srv.Serve(l) }()
	return nil
}

// Stop stops the witness: its port refuses connections until Restart.
func (w *Witness) Stop() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.srv == nil {
		return
	}
	_ = w.srv.Close()
	_ = w.w.Close()
	w.srv, w.w = nil, nil
}

// Witnessd returns the running witness, nil when stopped.
func (w *Witness) Witnessd() *witnessd.Witness {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.w
}

// Policy returns the text of a policy of k of ws, named w0, w1, ...
func Policy(k int, ws ...*Witness) string {
	var b strings.Builder
	names := make([]string, len(ws))
	for i, w := range ws {
		names[i] = fmt.Sprintf("w%d", i)
		fmt.Fprintf(&b, "witness %s %s %s\n", names[i], w.VerifierKey, w.URL)
	}
	fmt.Fprintf(&b, "group members %d %s\nquorum members\n", k, strings.Join(names, " "))
	return b.String()
}
