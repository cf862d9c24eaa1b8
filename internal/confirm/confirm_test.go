package confirm

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

func TestTyped(t *testing.T) {
	for _, tc := range []struct {
		name     string
		terminal bool
		in       string
		want     error
	}{
		{"the word", true, "op_abc\n", nil},
		{"the word with spaces", true, "  op_abc \n", nil},
		{"another word", true, "y\n", ErrNotConfirmed},
		{"nothing typed", true, "", ErrNotConfirmed},
		{"no terminal", false, "op_abc\n", ErrNoTerminal},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := strings.NewReader(tc.in)
			var out bytes.Buffer
			err := Typed(in, &out, tc.terminal, "Withdraw op_abc for good.", "op_abc")
			if !errors.Is(err, tc.want) && err != tc.want {
				t.Fatalf("Typed: %v, want %v", err, tc.want)
			}
			if !tc.terminal {
				if out.Len() != 0 || in.Len() != len(tc.in) {
					t.Fatalf("without a terminal it asked %q or read the input", out.String())
				}
				return
			}
			if !strings.Contains(out.String(), "Type op_abc to confirm: ") {
				t.Fatalf("asked %q", out.String())
			}
		})
	}
	if IsTerminal(strings.NewReader("")) {
		t.Fatal("a strings.Reader is a terminal")
	}
}
