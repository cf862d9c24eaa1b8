package tlog

import (
	"bytes"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/pkg/protocol"
)

// filesTransport answers GETs under /log/ from files, by path; others 404.
type filesTransport map[string][]byte

func (f filesTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	body, ok := f[strings.TrimPrefix(r.URL.Path, "/log/")]
	status := http.StatusOK
	if !ok {
		status = http.StatusNotFound
	}
	return &http.Response{StatusCode: status, Body: io.NopCloser(bytes.NewReader(body)), Header: http.Header{}, Request: r}, nil
}

// FuzzReadURLEntry serves a real three-entry embedded log over HTTP, with one of its
// files (the checkpoint, a hash tile or the entry bundle: the first argument picks it)
// replaced by the fuzzer's bytes, and reads an entry from it as the client does
// (ReadURLEntry). Whatever the served file holds, nothing panics, and an entry that is
// returned is the one uploaded at that index and verifies under the log's key: a
// federation serving forged tiles or a forged checkpoint cannot make a client take
// another entry.
func FuzzReadURLEntry(f *testing.F) {
	dir := f.TempDir()
	l := openTestLog(f, dir)
	pub, err := l.PublicKey(f.Context())
	if err != nil {
		f.Fatal(err)
	}
	var bodies []string
	for n := range 3 {
		body, _ := record(f, n)
		e, err := l.Upload(f.Context(), body)
		if err != nil {
			f.Fatal(err)
		}
		if int(e.Index) != n {
			f.Fatalf("entry %d at index %d", n, e.Index)
		}
		bodies = append(bodies, e.Bundle.Body)
	}
	files := filesTransport{}
	if err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		files[filepath.ToSlash(rel)], err = os.ReadFile(path)
		return err
	}); err != nil {
		f.Fatal(err)
	}
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	slices.Sort(names)
	for i, name := range names {
		f.Add(uint8(i), uint8(i%4), files[name])
		f.Add(uint8(i), uint8(1), append(bytes.Clone(files[name]), '\n'))
	}
	base, err := url.Parse("http://log.example.invalid/log/")
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, which, index uint8, data []byte) {
		served := filesTransport{}
		for name, body := range files {
			served[name] = body
		}
		served[names[int(which)%len(names)]] = data
		at := int64(index % 4)
		e, err := ReadURLEntry(t.Context(), base, &http.Client{Transport: served}, at, pub)
		if err != nil {
			return
		}
		if at >= int64(len(bodies)) || e.Bundle.Body != bodies[at] {
			t.Fatalf("index %d: read an entry that was not uploaded there: %q", at, e.Bundle.Body)
		}
		if _, err := protocol.VerifyLogBundle(&e.Bundle, protocol.LogVerifyOptions{Key: pub, AllowMissingSET: true}); err != nil {
			t.Fatalf("index %d: the entry read does not verify: %v", at, err)
		}
	})
}
