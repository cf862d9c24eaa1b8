package witness_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/pkg/protocol"
	"github.com/cairn-dev/cairn/pkg/witness"
)

// threeWitnesses returns three cosigners and a 2-of-3 policy over them.
func threeWitnesses(t *testing.T) ([]*witness.Cosigner, *witness.Policy) {
	t.Helper()
	var cs []*witness.Cosigner
	text := ""
	for _, name := range []string{"a.example/w", "b.example/w", "c.example/w"} {
		c, _, vkey := newCosigner(t, name)
		cs = append(cs, c)
		text += "witness " + strings.Split(name, ".")[0] + " " + vkey + " http://127.0.0.1:1/" + strings.Split(name, ".")[0] + "\n"
	}
	return cs, policy(t, text+"group members 2 a b c # two of three\nquorum members\n")
}

func cosign(t *testing.T, cp []byte, cs ...*witness.Cosigner) []byte {
	t.Helper()
	out := append([]byte(nil), cp...)
	for _, c := range cs {
		line, err := c.Cosign(textOf(cp), time.Now())
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, line...)
	}
	return out
}

func TestPolicyQuorum(t *testing.T) {
	cs, p := threeWitnesses(t)
	if got := p.Quorum(); got != "2 of (a.example/w, b.example/w, c.example/w)" {
		t.Errorf("Quorum() = %q", got)
	}
	if len(p.Witnesses) != 3 || p.Witnesses[1].URL != "http://127.0.0.1:1/b" {
		t.Errorf("witnesses %+v", p.Witnesses)
	}
	cp := logNote(t, "log.example/q", 10, 3)
	for _, tc := range []struct {
		name    string
		signers []*witness.Cosigner
		want    bool
	}{
		{"none", nil, false},
		{"one", cs[:1], false},
		{"one twice counts once", []*witness.Cosigner{cs[2], cs[2]}, false},
		{"two", cs[1:], true},
		{"three", cs, true},
	} {
		v, err := p.Check(cosign(t, cp, tc.signers...))
		if err != nil || v.Satisfied != tc.want {
			t.Errorf("%s: %+v, %v; want satisfied %v", tc.name, v, err, tc.want)
		}
	}
}

// The attacks: a cosignature that does not verify under a policy witness's name and key
// hash fails the check wherever it stands; a witness outside the policy, or one with the
// policy witness's name but another key, counts for nothing.
func TestPolicyRefusesForgedCosignatures(t *testing.T) {
	cs, p := threeWitnesses(t)
	cp := logNote(t, "log.example/f", 10, 3)
	good := cosign(t, cp, cs[0], cs[1])
	if v, err := p.Check(good); err != nil || !v.Satisfied {
		t.Fatalf("honest: %+v %v", v, err)
	}
	other := logNote(t, "log.example/f", 10, 4) // same size, another root: a split view
	moved := append(append([]byte(nil), other...), good[len(cp):]...)
	if _, err := p.Check(moved); !errors.Is(err, witness.ErrBadCosignature) {
		t.Errorf("cosignatures moved to another root: %v, want ErrBadCosignature", err)
	}
	// A flipped bit in the timestamp of the second line, behind a good first line.
	lines := strings.SplitAfter(string(good[len(cp):]), "\n")
	name, b64, _ := strings.Cut(strings.TrimPrefix(lines[1], "\u2014 "), " ")
	raw := mustB64(t, strings.TrimSpace(b64))
	raw[4+7] ^= 1
	flipped := string(cp) + lines[0] + "\u2014 " + name + " " + b64enc(raw) + "\n"
	if _, err := p.Check([]byte(flipped)); !errors.Is(err, witness.ErrBadCosignature) {
		t.Errorf("timestamp changed: %v, want ErrBadCosignature", err)
	}
	// Impostors: a key outside the policy, and one that takes a policy witness's name.
	outsider, _, _ := newCosigner(t, "d.example/w")
	namesake, _, _ := newCosigner(t, "a.example/w")
	v, err := p.Check(cosign(t, cp, cs[1], outsider, namesake))
	if err != nil || v.Satisfied || len(v.Cosignatures) != 1 {
		t.Errorf("impostors counted: %+v, %v", v, err)
	}
	// A note that is not in the signed-note syntax.
	if _, err := p.Check(bytes.ReplaceAll(good, []byte("\n"), []byte("\r\n"))); !errors.Is(err, protocol.ErrMalformed) {
		t.Errorf("CRLF note: %v, want ErrMalformed", err)
	}
}

func TestParsePolicyRefusals(t *testing.T) {
	_, _, vkey := newCosigner(t, "w.example")
	_, _, vkey2 := newCosigner(t, "v.example")
	for name, text := range map[string]string{
		"no quorum":          "witness w " + vkey + "\n",
		"unknown member":     "witness w " + vkey + "\ngroup g 1 w x\nquorum g\n",
		"threshold too high": "witness w " + vkey + "\ngroup g 2 w\nquorum g\n",
		"threshold zero":     "witness w " + vkey + "\ngroup g 0 w\nquorum g\n",
		"twice":              "witness w " + vkey + "\nwitness w " + vkey2 + "\nquorum w\n",
		"same key twice":     "witness w " + vkey + "\nwitness v " + vkey + "\nquorum w\n",
		"keyword name":       "witness all " + vkey + "\nquorum all\n",
		"bad url":            "witness w " + vkey + " ftp://x\nquorum w\n",
		"bad key":            "witness w " + vkey[:10] + "\nquorum w\n",
		"unknown keyword":    "witnes w " + vkey + "\nquorum w\n",
		"two quorums":        "witness w " + vkey + "\nquorum w\nquorum w\n",
		"quorum undefined":   "quorum w\n",
	} {
		if _, err := witness.ParsePolicy([]byte(text)); !errors.Is(err, witness.ErrPolicy) {
			t.Errorf("%s: %v, want ErrPolicy", name, err)
		}
	}
	p := policy(t, "# nothing\nlog ignored+00000000+AA==\nquorum none\n")
	if v, err := p.Check(logNote(t, "l", 1, 1)); err != nil || !v.Satisfied || p.Quorum() != "none" {
		t.Errorf("quorum none: %+v, %v, %q", v, err, p.Quorum())
	}
}

func TestAddCheckpointRoundTrip(t *testing.T) {
	cp := logNote(t, "log.example/r", 9, 1)
	r := &witness.AddCheckpoint{OldSize: 5, Proof: [][]byte{bytes.Repeat([]byte{1}, 32), bytes.Repeat([]byte{2}, 32)}, Checkpoint: cp}
	got, err := witness.ParseAddCheckpoint(r.Marshal())
	if err != nil || got.OldSize != 5 || len(got.Proof) != 2 || !bytes.Equal(got.Checkpoint, cp) || got.Proof[1][0] != 2 {
		t.Fatalf("round trip: %+v, %v", got, err)
	}
	h := b64enc(bytes.Repeat([]byte{1}, 32)) + "\n"
	for name, body := range map[string]string{
		"empty":             "",
		"no old":            "new 5\n\n" + string(cp),
		"leading zero":      "old 05\n" + h + "\n" + string(cp),
		"negative":          "old -1\n\n" + string(cp),
		"no empty line":     "old 5\n" + h,
		"short hash":        "old 5\nAAAA\n\n" + string(cp),
		"proof from zero":   "old 0\n" + h + "\n" + string(cp),
		"64 proof lines":    "old 5\n" + strings.Repeat(h, 64) + "\n" + string(cp),
		"non-canonical b64": "old 5\n" + h[:42] + "B=\n\n" + string(cp),
	} {
		if _, err := witness.ParseAddCheckpoint([]byte(body)); !errors.Is(err, witness.ErrMalformedRequest) {
			t.Errorf("%s: %v, want ErrMalformedRequest", name, err)
		}
	}
}
