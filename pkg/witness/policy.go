package witness

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cairn-dev/cairn/pkg/protocol"
)

// ErrPolicy means a witness policy's text is not valid.
var ErrPolicy = errors.New("witness policy")

// ErrBadCosignature means a checkpoint carries a signature line under the name and key
// hash of a witness the policy trusts that is not that witness's cosignature of it.
var ErrBadCosignature = errors.New("a witness's cosignature does not verify")

// Witness is one witness a policy names.
type Witness struct {
	// Key is the witness's name and public key.
	Key Key
	// URL is where it takes add-checkpoint requests (its submission prefix); empty in a
	// policy that only verifies.
	URL string
}

// Policy says whose cosignatures a checkpoint needs: a quorum of witnesses, as a tree of
// groups of k of n. Its text form is the one Sigsum and tessera read, one statement a line,
// "#" starting a comment:
//
//	witness <name> <cosignature/v1 vkey> [<url>]
//	group <name> <k|any|all> <member>...
//	quorum <name|none>
//
// A member is a witness or group defined on an earlier line. "log" lines (a Sigsum
// policy's log keys) are read and ignored: Cairn takes the log's key elsewhere.
type Policy struct {
	// Witnesses are the witnesses the policy names, in the order of the text.
	Witnesses []Witness
	quorum    component
	text      string
}

// component is a witness or a group of components.
type component interface {
	satisfied(cosigned map[string]bool) bool
	describe() string
}

// witnessComponent is one witness, known to satisfied by its key's text form (two
// witnesses may share a key name) and described by its name.
type witnessComponent struct{ vkey, name string }

func (w witnessComponent) satisfied(cosigned map[string]bool) bool { return cosigned[w.vkey] }
func (w witnessComponent) describe() string                        { return w.name }

type group struct {
	k       int
	members []component
}

func (g group) satisfied(cosigned map[string]bool) bool {
	n := 0
	for _, m := range g.members {
		if m.satisfied(cosigned) {
			n++
		}
	}
	return n >= g.k
}

func (g group) describe() string {
	names := make([]string, len(g.members))
	for i, m := range g.members {
		names[i] = m.describe()
	}
	return fmt.Sprintf("%d of (%s)", g.k, strings.Join(names, ", "))
}

// maxPolicyWitnesses bounds a policy: every checkpoint check costs a verification a
// signature line, and a note has at most 100 lines.
const maxPolicyWitnesses = 64

// ParsePolicy reads a policy's text.
func ParsePolicy(text []byte) (*Policy, error) {
	p := &Policy{text: string(text)}
	components := map[string]component{}
	keys := map[string]bool{}
	quorumSet := false
	sc := bufio.NewScanner(bytes.NewReader(text))
	for n := 1; sc.Scan(); n++ {
		line, _, _ := strings.Cut(sc.Text(), "#")
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		bad := func(format string, a ...any) error {
			return fmt.Errorf("%w: line %d: %s", ErrPolicy, n, fmt.Sprintf(format, a...))
		}
		if (fields[0] == "witness" || fields[0] == "group") && len(fields) > 1 && components[fields[1]] != nil {
			return nil, bad("%q is defined twice", fields[1])
		}
		switch fields[0] {
		case "log":
		case "witness":
			if len(fields) < 3 || len(fields) > 4 {
				return nil, bad("want \"witness <name> <vkey> [<url>]\"")
			}
			if reserved(fields[1]) {
				return nil, bad("%q is a keyword, not a name", fields[1])
			}
			k, err := ParseKey(fields[2])
			if err != nil {
				return nil, bad("%v", err)
			}
			if keys[k.String()] {
				return nil, bad("the key of %q is named twice", fields[1])
			}
			keys[k.String()] = true
			w := Witness{Key: k}
			if len(fields) == 4 {
				u, err := url.Parse(fields[3])
				if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
					return nil, bad("%q is not an http(s) URL", fields[3])
				}
				w.URL = strings.TrimSuffix(u.String(), "/")
			}
			if len(p.Witnesses) == maxPolicyWitnesses {
				return nil, bad("more than %d witnesses", maxPolicyWitnesses)
			}
			p.Witnesses = append(p.Witnesses, w)
			components[fields[1]] = witnessComponent{vkey: k.String(), name: k.Name}
		case "group":
			if len(fields) < 4 {
				return nil, bad("want \"group <name> <k|any|all> <member>...\"")
			}
			if reserved(fields[1]) {
				return nil, bad("%q is a keyword, not a name", fields[1])
			}
			g := group{}
			for _, m := range fields[3:] {
				c, ok := components[m]
				if !ok {
					return nil, bad("%q is not a witness or group defined above", m)
				}
				g.members = append(g.members, c)
			}
			switch fields[2] {
			case "any":
				g.k = 1
			case "all":
				g.k = len(g.members)
			default:
				k, err := strconv.Atoi(fields[2])
				if err != nil || k < 1 || k > len(g.members) {
					return nil, bad("the threshold %q is not any, all or 1 to %d", fields[2], len(g.members))
				}
				g.k = k
			}
			components[fields[1]] = g
		case "quorum":
			if len(fields) != 2 || quorumSet {
				return nil, bad("want one \"quorum <name|none>\"")
			}
			quorumSet = true
			if fields[1] == "none" {
				p.quorum = group{}
				continue
			}
			c, ok := components[fields[1]]
			if !ok {
				return nil, bad("%q is not a witness or group defined above", fields[1])
			}
			p.quorum = c
		default:
			return nil, bad("unknown keyword %q", fields[0])
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrPolicy, err)
	}
	if !quorumSet {
		return nil, fmt.Errorf("%w: no \"quorum\" line", ErrPolicy)
	}
	return p, nil
}

func reserved(name string) bool {
	return slices.Contains([]string{"log", "witness", "group", "quorum", "any", "all", "none"}, name)
}

// String returns the policy's text.
func (p *Policy) String() string { return p.text }

// Quorum says in words what the policy requires, e.g. "2 of (w1, w2, w3)".
func (p *Policy) Quorum() string {
	if g, ok := p.quorum.(group); ok && len(g.members) == 0 {
		return "none"
	}
	return p.quorum.describe()
}

// Cosignature is a witness's verified cosignature.
type Cosignature struct {
	// Witness is the witness's key name.
	Witness string
	// Key is the witness's key.
	Key Key
	// Time is when it cosigned.
	Time time.Time
}

// Verdict is what a checkpoint's cosignatures meet of a policy.
type Verdict struct {
	// Cosignatures are the valid cosignatures of the policy's witnesses, one a witness,
	// in the order of the policy.
	Cosignatures []Cosignature
	// Satisfied says whether they meet the quorum.
	Satisfied bool
}

// Witnessed returns the names of the witnesses that cosigned.
func (v Verdict) Witnessed() []string {
	names := make([]string, len(v.Cosignatures))
	for i, c := range v.Cosignatures {
		names[i] = c.Witness
	}
	return names
}

// Check reads the cosignatures of the policy's witnesses on a checkpoint note. It does not
// check the log's own signature (protocol.OpenCheckpoint does). A line under a policy
// witness's name and key hash that does not verify is ErrBadCosignature, wherever it
// stands; lines of other keys are skipped; a malformed note is protocol.ErrMalformed.
func (p *Policy) Check(note []byte) (Verdict, error) {
	text, sigs, err := protocol.ParseNote(note)
	if err != nil {
		return Verdict{}, err
	}
	at := map[string]time.Time{} // by the witness's vkey
	for _, sig := range sigs {
		for _, w := range p.Witnesses {
			if w.Key.Name != sig.Name || w.Key.KeyHash() != sig.KeyHash {
				continue
			}
			t, ok := w.Key.Verify(text, sig.Signature)
			if !ok {
				return Verdict{}, fmt.Errorf("%w: the line of witness %s", ErrBadCosignature, protocol.Quote(sig.Name))
			}
			if prev, seen := at[w.Key.String()]; !seen || t.After(prev) {
				at[w.Key.String()] = t
			}
		}
	}
	var v Verdict
	cosigned := map[string]bool{}
	for _, w := range p.Witnesses {
		if t, ok := at[w.Key.String()]; ok {
			v.Cosignatures = append(v.Cosignatures, Cosignature{Witness: w.Key.Name, Key: w.Key, Time: t})
			cosigned[w.Key.String()] = true
		}
	}
	v.Satisfied = p.quorum.satisfied(cosigned)
	return v, nil
}
