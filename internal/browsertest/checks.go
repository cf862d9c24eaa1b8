package browsertest

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
)

// listen records a tab's events. It runs on the tab's reading goroutine: it must be
// fast and call no command.
func (b *Browser) listen(ev any) {
	var problem string
	var request pageRequest
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
		request = pageRequest{URL: e.Request.URL, Type: string(e.Type), Document: e.DocumentURL,
			Initiator: initiatorText(e.Initiator)}
	default:
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if problem != "" {
		b.problems = append(b.problems, problem)
	}
	if request.URL != "" && len(b.requests) < maxRequests {
		b.requests = append(b.requests, request)
	}
}

// maxRequests bounds the requests a browser records.
const maxRequests = 10000

// pageRequest is one request of a page as the DevTools protocol reports it.
type pageRequest struct {
	URL       string
	Type      string // the resource type: Document, Script, Fetch, ...
	Document  string // the URL of the document it was made for
	Initiator string // what started it: "script http://127.0.0.1:1234/app.js:7", "parser ...", "other"
}

// String is the URL with what the protocol says of its origin.
func (r pageRequest) String() string {
	return fmt.Sprintf("%s (%s for %s, initiated by %s)", r.URL, r.Type, r.Document, r.Initiator)
}

// initiatorText names an initiator: its type and, where it has one, the place in a
// script or document that made the request (the top of its stack for a script).
func initiatorText(in *network.Initiator) string {
	if in == nil {
		return "nothing named"
	}
	where, line := in.URL, in.LineNumber
	if in.Stack != nil && len(in.Stack.CallFrames) > 0 {
		where, line = in.Stack.CallFrames[0].URL, float64(in.Stack.CallFrames[0].LineNumber)
	}
	if where == "" {
		return string(in.Type)
	}
	return fmt.Sprintf("%s %s:%d", in.Type, where, int(line)+1)
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
	urls := make([]string, len(b.requests))
	for i, r := range b.requests {
		urls[i] = r.URL
	}
	return urls
}

func (b *Browser) pageRequests() []pageRequest {
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

// unattributed follows a page trap's line for a host that no request the protocol
// reported of a page names.
const unattributed = " (no page request the DevTools protocol reported names this host: a worker's or " +
	"WebSocket's, or a browser service running in the pages' context; switch such a service off in " +
	"internal/browsertest/quiet.go)"

// NoExternalRequests fails the test (without stopping it) listing every request a page
// of b made to anything but loopback (127.0.0.1, localhost, [::1]) or a data:, blob: or
// about: URL, as the DevTools protocol reported it (URL, resource type, document and
// initiator), and everything the page trap received: any connection the pages' browser
// context tried, which also covers what the protocol does not attribute to a page (a
// worker's fetch, a WebSocket). What the browser tried on its own, in its default
// context, is not the page's doing: it is logged when the browser stops.
func (b *Browser) NoExternalRequests(t testing.TB) {
	t.Helper()
	var bad []string
	named := map[string]bool{} // the hosts of the pages' requests that left loopback
	for _, r := range b.pageRequests() {
		if !local(r.URL) {
			bad = append(bad, "page requested "+r.String())
			if u, err := url.Parse(r.URL); err == nil {
				named[u.Hostname()] = true
			}
		}
	}
	seen, dropped := b.pageTrap.received()
	for _, r := range seen {
		line := "page trap received " + r.what
		if !named[r.host] {
			line += unattributed
		}
		bad = append(bad, line)
	}
	if dropped > 0 {
		bad = append(bad, fmt.Sprintf("page trap received %d more", dropped))
	}
	if len(bad) > 0 {
		t.Errorf("requests left loopback:%s", bullets(bad))
	}
}

// logServiceRequests logs what the browser's own services tried, all of it refused by
// the service trap, and appends the same as one line to logFile when it is set.
func (b *Browser) logServiceRequests(t testing.TB, logFile string) {
	t.Helper()
	own := b.serviceTrap.requests()
	summary := "none"
	if len(own) > 0 {
		summary = strings.Join(own, ", ")
	}
	t.Logf("%s: its own services' requests, refused by the trap and not the pages': %s", b.version, summary)
	if logFile == "" {
		return
	}
	line := fmt.Sprintf("%s\t%s\t%s\n", t.Name(), b.version, summary)
	f, err := os.OpenFile(logFile, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err == nil {
		_, err = f.WriteString(line) // one write, so lines of parallel test binaries do not mix
		err = errors.Join(err, f.Close())
	}
	if err != nil {
		t.Errorf("browser log: %v", err)
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
