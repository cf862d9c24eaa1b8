package browsertest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
)

// trap is the proxy for every host but loopback: it records what arrives (plain HTTP
// requests and HTTPS/WebSocket CONNECTs) and refuses it, so nothing leaves the machine.
type trap struct {
	mu   sync.Mutex
	seen []string
}

func (tr *trap) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	tr.mu.Lock()
	tr.seen = append(tr.seen, r.Method+" "+r.Host+r.URL.Path)
	tr.mu.Unlock()
	http.Error(w, "browser tests allow no network but loopback", http.StatusForbidden)
}

func (tr *trap) requests() []string {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return slices.Clone(tr.seen)
}

// listen records a tab's events. It runs on the tab's reading goroutine: it must be
// fast and call no command.
func (b *Browser) listen(ev any) {
	var problem, request string
	switch e := ev.(type) {
	case *runtime.EventConsoleAPICalled:
		if e.Type == runtime.ConsoleAPICalledTypeError || e.Type == runtime.ConsoleAPICalledTypeAssert {
			problem = "console." + string(e.Type) + ": " + argsText(e.Args) + place(e.StackTrace)
		}
	case *runtime.EventExceptionThrown:
		d := e.ExceptionDetails
		text := d.Text
		if d.Exception != nil && d.Exception.Description != "" {
			desc, _, _ := strings.Cut(d.Exception.Description, "\n    at ")
			text += " " + desc
		}
		problem = fmt.Sprintf("exception: %s (%s:%d)", text, d.URL, d.LineNumber+1)
	case *log.EventEntryAdded:
		if e.Entry.Level == log.EntryLevelError && !automaticFavicon(e.Entry) {
			problem = fmt.Sprintf("log %s error: %s (%s)", e.Entry.Source, e.Entry.Text, e.Entry.URL)
		}
	case *network.EventRequestWillBeSent:
		request = e.Request.URL
	default:
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if problem != "" {
		b.problems = append(b.problems, problem)
	}
	if request != "" {
		b.requests = append(b.requests, request)
	}
}

// automaticFavicon reports whether a log entry is the failure of the request for
// /favicon.ico that Chromium makes by itself for a page that declares no icon: that
// request is the browser's, not the page's, so its 404 is no error of the page.
func automaticFavicon(e *log.Entry) bool {
	u, err := url.Parse(e.URL)
	return err == nil && e.Source == log.EntrySourceNetwork && u.Path == "/favicon.ico"
}

// argsText renders console arguments: strings as they are, other values as JSON or
// their description.
func argsText(args []*runtime.RemoteObject) string {
	parts := make([]string, 0, len(args))
	for _, a := range args {
		var s string
		switch {
		case a.Type == runtime.RemoteObjectTypeString && json.Unmarshal(a.Value, &s) == nil:
			parts = append(parts, s)
		case a.Description != "":
			parts = append(parts, a.Description)
		default:
			parts = append(parts, string(a.Value))
		}
	}
	return strings.Join(parts, " ")
}

// place is " (url:line)" of a stack's top frame, or "".
func place(st *runtime.StackTrace) string {
	if st == nil || len(st.CallFrames) == 0 {
		return ""
	}
	f := st.CallFrames[0]
	return fmt.Sprintf(" (%s:%d)", f.URL, f.LineNumber+1)
}

func (b *Browser) consoleProblems() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.problems)
}

// Requests returns the URL of every request any page of b made so far, in order.
func (b *Browser) Requests() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.requests)
}

// NoConsoleErrors fails the test (without stopping it) listing every console error or
// assertion, uncaught exception and browser log error seen in any page of b.
func (b *Browser) NoConsoleErrors(t testing.TB) {
	t.Helper()
	if p := b.consoleProblems(); len(p) > 0 {
		t.Errorf("the pages logged %d console errors or exceptions:%s", len(p), bullets(p))
	}
}

// NoExternalRequests fails the test (without stopping it) listing every request a page
// of b made to anything but loopback (127.0.0.1, localhost, [::1]) or a data:, blob: or
// about: URL, and everything the trap proxy received (which includes the browser's own
// traffic to other hosts).
func (b *Browser) NoExternalRequests(t testing.TB) {
	t.Helper()
	var bad []string
	for _, u := range b.Requests() {
		if !local(u) {
			bad = append(bad, "page requested "+u)
		}
	}
	for _, r := range b.trap.requests() {
		bad = append(bad, "trap received "+r)
	}
	if len(bad) > 0 {
		t.Errorf("requests left loopback:%s", bullets(bad))
	}
}

// local reports whether a request URL stays on the machine.
func local(raw string) bool {
	u, err := url.Parse(raw)
	if err != nil {
		return false
	}
	switch u.Scheme {
	case "data", "blob", "about":
		return true
	case "http", "https", "ws", "wss":
		switch u.Hostname() {
		case "127.0.0.1", "localhost", "::1":
			return true
		}
	}
	return false
}
