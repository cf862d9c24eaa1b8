package sidecar

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// incomingFiles lists the files under the store's .incoming.
func incomingFiles(t *testing.T, s *Store) []string {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(s.Dir(), incomingDir))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

func TestIncomingIsKeptOnlyWhenPromoted(t *testing.T) {
	s := NewStore(filepath.Join(t.TempDir(), "sc"))
	content := bytes.Repeat([]byte("model card "), 1000)
	in, err := s.Incoming()
	if err != nil {
		t.Fatal(err)
	}
	for rest := content; len(rest) > 0; rest = rest[min(333, len(rest)):] {
		chunk := rest[:min(333, len(rest))]
		if _, err := in.Write(chunk); err != nil {
			t.Fatal(err)
		}
	}
	if in.Digest() != Digest(content) || in.Size() != int64(len(content)) {
		t.Fatalf("digest %s size %d, want %s %d", in.Digest(), in.Size(), Digest(content), len(content))
	}
	if _, err := s.Get(in.Digest()); !errors.Is(err, ErrNotFound) {
		t.Fatalf("before Promote the store serves it: %v", err)
	}
	if err := s.Promote(in); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Get(Digest(content)); err != nil || !bytes.Equal(got, content) {
		t.Fatalf("after Promote: %v", err)
	}
	in.Discard() // after Promote: nothing
	if _, err := s.Get(Digest(content)); err != nil {
		t.Fatalf("Discard after Promote removed the stored file: %v", err)
	}

	again, err := s.Incoming()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := again.Write([]byte("refused")); err != nil {
		t.Fatal(err)
	}
	again.Discard()
	if err := s.Promote(again); err == nil {
		t.Fatal("a discarded sidecar was promoted")
	}
	if _, err := s.Get(Digest([]byte("refused"))); !errors.Is(err, ErrNotFound) {
		t.Fatalf("a discarded sidecar is stored: %v", err)
	}
	if left := incomingFiles(t, s); len(left) != 0 {
		t.Fatalf("files left under .incoming: %v", left)
	}
}

func TestIncomingRefusesMoreThanMaxBytes(t *testing.T) {
	s := NewStore(t.TempDir())
	in, err := s.Incoming()
	if err != nil {
		t.Fatal(err)
	}
	defer in.Discard()
	if _, err := in.Write(make([]byte, MaxBytes)); err != nil {
		t.Fatal(err)
	}
	if n, err := in.Write([]byte{0}); !errors.Is(err, ErrTooLarge) || n != 0 {
		t.Fatalf("byte MaxBytes+1: %d, %v; want 0, ErrTooLarge", n, err)
	}
}

func TestSweepRemovesWhatNoOneNamesOnceOldEnough(t *testing.T) {
	s := NewStore(t.TempDir())
	put := func(content string) string {
		d, err := s.Put([]byte(content))
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	named, unnamed, fresh := put("named"), put("unnamed"), put("fresh and unnamed")
	crashed, err := s.Incoming() // a request that died before promoting
	if err != nil {
		t.Fatal(err)
	}
	if _, err := crashed.Write([]byte("half a sidecar")); err != nil {
		t.Fatal(err)
	}
	receiving, err := s.Incoming() // a request still receiving
	if err != nil {
		t.Fatal(err)
	}
	defer receiving.Discard()
	old := time.Now().Add(-time.Hour)
	for _, p := range []string{s.path(named), s.path(unnamed), crashed.f.Name()} {
		if err := os.Chtimes(p, old, old); err != nil {
			t.Fatal(err)
		}
	}
	cutoff := time.Now().Add(-30 * time.Minute)
	res, err := s.Sweep(func(d string) (bool, error) { return d == named, nil }, cutoff)
	if err != nil {
		t.Fatal(err)
	}
	if res.Incoming != 1 || res.Unnamed != 1 || res.Bytes != int64(len("half a sidecar")+len("unnamed")) {
		t.Fatalf("swept %+v; want 1 incoming, 1 unnamed", res)
	}
	for d, want := range map[string]error{named: nil, fresh: nil, unnamed: ErrNotFound} {
		if _, err := s.Get(d); (want == nil && err != nil) || (want != nil && !errors.Is(err, want)) {
			t.Fatalf("Get %s after the sweep: %v, want %v", d, err, want)
		}
	}
	if left := incomingFiles(t, s); len(left) != 1 || left[0] != filepath.Base(receiving.f.Name()) {
		t.Fatalf(".incoming after the sweep: %v; want only the request still receiving", left)
	}

	// A sidecar promoted again is young again: the next sweep leaves it.
	if err := os.Chtimes(s.path(named), old, old); err != nil {
		t.Fatal(err)
	}
	in, err := s.Incoming()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := in.Write([]byte("named")); err != nil {
		t.Fatal(err)
	}
	if err := s.Promote(in); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Sweep(func(string) (bool, error) { return false, nil }, cutoff); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(named); err != nil {
		t.Fatalf("a sidecar promoted again was swept: %v", err)
	}

	// An error from named keeps the file and is reported.
	if err := os.Chtimes(s.path(named), old, old); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("cache not synced")
	if _, err := s.Sweep(func(string) (bool, error) { return false, boom }, cutoff); !errors.Is(err, boom) {
		t.Fatalf("Sweep with a failing lookup: %v", err)
	}
	if _, err := s.Get(named); err != nil {
		t.Fatalf("a failing lookup removed the file: %v", err)
	}
}

func TestSweepOfAMissingStore(t *testing.T) {
	s := NewStore(filepath.Join(t.TempDir(), "never-made"))
	if res, err := s.Sweep(func(string) (bool, error) { return false, nil }, time.Now()); err != nil || res != (SweepResult{}) {
		t.Fatalf("%+v %v", res, err)
	}
}
