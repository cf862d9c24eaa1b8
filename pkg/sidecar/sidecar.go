// Package sidecar holds attestation sidecars: small files (an in-toto statement, a model
// card, an evaluation report) an operator sends with a chain export. The federation keeps
// each by the SHA-256 of its content, once however many submissions carry it, in a
// directory of files written atomically; it never verifies what they say.
package sidecar

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"mime"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Limits of one request's sidecars.
const (
	// MaxBytes is the largest sidecar, decoded.
	MaxBytes = 1 << 20
	// MaxCount is how many sidecars one submission may carry.
	MaxCount = 8
	// MaxNameBytes bounds a sidecar's display name; longer ones are cut.
	MaxNameBytes = 128
	// MaxMediaTypeBytes bounds a media type, parameters included.
	MaxMediaTypeBytes = 127
	// DefaultMediaType is the media type of a sidecar that names none.
	DefaultMediaType = "application/octet-stream"
)

// Meta is what a Submission records of one sidecar.
type Meta struct {
	Digest    string // 64 lowercase hex of the content's SHA-256
	MediaType string
	Size      int64
	Name      string
}

// Digest is the lowercase hex SHA-256 of content.
func Digest(content []byte) string {
	sum := sha256.Sum256(content)
	return hex.EncodeToString(sum[:])
}

// ValidDigest reports whether s is 64 lowercase hex digits.
func ValidDigest(s string) bool { return len(s) == 2*sha256.Size && lowerHex(s) }

// lowerHex reports whether s is lowercase hex digits only.
func lowerHex(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// CheckMediaType parses mt (RFC 2045 syntax, by mime.ParseMediaType) and returns it
// re-formatted in canonical form (lower-case type, parameters sorted); an empty mt is
// DefaultMediaType.
func CheckMediaType(mt string) (string, error) {
	if strings.TrimSpace(mt) == "" {
		return DefaultMediaType, nil
	}
	if len(mt) > MaxMediaTypeBytes {
		return "", fmt.Errorf("media type is over %d bytes", MaxMediaTypeBytes)
	}
	base, params, err := mime.ParseMediaType(mt)
	if err != nil {
		return "", fmt.Errorf("media type %.40q: %w", mt, err)
	}
	if !strings.Contains(base, "/") {
		return "", fmt.Errorf("media type %.40q is not type/subtype", mt)
	}
	out := mime.FormatMediaType(base, params)
	if out == "" || len(out) > MaxMediaTypeBytes {
		return "", fmt.Errorf("media type %.40q cannot be stored", mt)
	}
	return out, nil
}

// CleanName makes a client-given file name fit for display: the last path element only
// (after any / or \), control and other unprintable characters, quotes and backslashes
// replaced by '_', at most MaxNameBytes bytes of valid UTF-8. It is never used as a path.
// A name with nothing left is "sidecar".
func CleanName(name string) string {
	if i := strings.LastIndexAny(name, `/\`); i >= 0 {
		name = name[i+1:]
	}
	var b strings.Builder
	for _, r := range name {
		if r == utf8.RuneError || !unicode.IsPrint(r) || r == '"' || r == '\\' {
			r = '_'
		}
		if b.Len()+utf8.RuneLen(r) > MaxNameBytes {
			break
		}
		b.WriteRune(r)
	}
	name = strings.TrimSpace(b.String())
	if name == "" || name == "." || name == ".." {
		return "sidecar"
	}
	return name
}

// Renderable reports whether a browser might run or render mt as a document (HTML, XML,
// SVG, script): such sidecars are served as DefaultMediaType.
func Renderable(mt string) bool {
	base, _, err := mime.ParseMediaType(mt)
	if err != nil {
		return true
	}
	switch {
	case base == "text/html", strings.HasSuffix(base, "xml"), strings.Contains(base, "script"),
		strings.HasPrefix(base, "multipart/"), base == "text/css", base == "text/vtt":
		return true
	}
	return false
}

// Errors of Store.
var (
	// ErrNotFound: no sidecar of that digest is stored.
	ErrNotFound = errors.New("sidecar not found")
	// ErrCorrupt: the stored file no longer hashes to its digest.
	ErrCorrupt = errors.New("stored sidecar does not match its digest")
	// ErrInvalidDigest: the digest is not 64 lowercase hex digits.
	ErrInvalidDigest = errors.New("digest is not 64 lowercase hex digits")
)
