package api

import (
	"crypto/sha256"
	"crypto/subtle"
	"net/http"
	"strings"
)

// authorized reports whether r carries the API key as a bearer token, or no key is
// configured. The token and the key are compared as SHA-256 digests with
// crypto/subtle, so the time taken says nothing about the key, not even its length.
func (s *Server) authorized(r *http.Request) bool {
	if s.apiKey == "" {
		return true
	}
	scheme, token, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return false
	}
	got := sha256.Sum256([]byte(strings.TrimSpace(token)))
	return subtle.ConstantTimeCompare(got[:], s.apiKeyDigest[:]) == 1
}

// requireKey answers 401 to requests without the API key, when one is configured.
func (s *Server) requireKey(next http.Handler) http.Handler {
	if s.apiKey == "" {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !s.authorized(r) {
			unauthorized(w)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// unauthorized answers 401 with the challenge RFC 6750 describes.
func unauthorized(w http.ResponseWriter) {
	w.Header().Set("WWW-Authenticate", `Bearer realm="cairn"`)
	writeError(w, http.StatusUnauthorized, codeUnauthorized,
		"this route needs the API key: send the header Authorization: Bearer <key>")
}
