package cmdutil

import (
	"encoding/json"
	"io"
	"os"
)

// SilentError carries an error whose message the command has already printed: main
// exits with its code and prints nothing more.
type SilentError struct{ Err error }

func (e SilentError) Error() string { return e.Err.Error() }
func (e SilentError) Unwrap() error { return e.Err }

// WriteJSON writes v as indented JSON.
func WriteJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// OpenInput opens a file, or standard input for "-".
func OpenInput(stdin io.Reader, path string) (io.Reader, func(), error) {
	if path == "-" {
		return stdin, func() {}, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	return f, func() { _ = f.Close() }, nil
}
