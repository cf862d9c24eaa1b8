package sidecar

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestStoreDeduplicatesAndChecks(t *testing.T) {
	dir := t.TempDir()
	s := NewStore(filepath.Join(dir, "sc"))
	content := []byte("an in-toto statement")
	d1, err := s.Put(content)
	if err != nil {
		t.Fatal(err)
	}
	d2, err := s.Put(append([]byte(nil), content...))
	if err != nil || d1 != d2 || d1 != Digest(content) {
		t.Fatalf("Put twice: %s %s %v", d1, d2, err)
	}
	entries, err := os.ReadDir(filepath.Join(dir, "sc", d1[:2]))
	if err != nil || len(entries) != 1 || entries[0].Name() != d1 {
		t.Fatalf("want one file named by the digest, got %v (%v)", entries, err)
	}
	if got, err := s.Get(d1); err != nil || string(got) != string(content) {
		t.Fatalf("Get: %q %v", got, err)
	}
	if err := os.WriteFile(filepath.Join(dir, "sc", d1[:2], d1), []byte("changed"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(d1); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("a changed file: %v, want ErrCorrupt", err)
	}
	if _, err := s.Put(content); err != nil { // a corrupt file is rewritten
		t.Fatal(err)
	}
	if _, err := s.Get(d1); err != nil {
		t.Fatalf("after rewriting: %v", err)
	}
	for _, bad := range []string{"", "../" + d1[3:], strings.ToUpper(d1), d1 + "0"} {
		if _, err := s.Get(bad); !errors.Is(err, ErrInvalidDigest) {
			t.Errorf("Get(%q): %v, want ErrInvalidDigest", bad, err)
		}
	}
	if _, err := s.Get(Digest([]byte("never stored"))); !errors.Is(err, ErrNotFound) {
		t.Errorf("unknown digest: %v", err)
	}
	if _, err := s.Put(make([]byte, MaxBytes+1)); err == nil {
		t.Error("Put took MaxBytes + 1")
	}
}

func TestCleanName(t *testing.T) {
	for in, want := range map[string]string{
		"../../etc/passwd":       "passwd",
		`C:\x\..\evil.exe`:       "evil.exe",
		"..":                     "sidecar",
		"":                       "sidecar",
		"a\x00b\nc\"d":           "a_b_c_d",
		"card.md":                "card.md",
		strings.Repeat("é", 100): strings.Repeat("é", 64),
	} {
		if got := CleanName(in); got != want {
			t.Errorf("CleanName(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestCheckMediaType(t *testing.T) {
	for in, want := range map[string]string{
		"":                             DefaultMediaType,
		"Text/Markdown; Charset=utf-8": "text/markdown; charset=utf-8",
		"application/vnd.in-toto+json": "application/vnd.in-toto+json",
	} {
		if got, err := CheckMediaType(in); err != nil || got != want {
			t.Errorf("CheckMediaType(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"text/", "text", "text/plain; x", "a/" + strings.Repeat("b", 200), "text/plain\r\nX: y"} {
		if _, err := CheckMediaType(bad); err == nil {
			t.Errorf("CheckMediaType(%q) took it", bad)
		}
	}
}
