package policy

import (
	"regexp"
	"strings"
	"unicode/utf8"
)

// maxRawMatches bounds how many matches of one expression in one text are looked at.
const maxRawMatches = 4096

// def defines a built-in pattern. Built-ins are written so that Go's regexp can skip
// through a text quickly: each expression starts with a literal (which regexp finds with
// a fast substring search), or declares a window, or extends leftwards (see below).
// Either way matching stays linear in the text.
type def struct {
	id, category, description string
	// exprs are RE2 expressions; a match of any is a match of the pattern. Splitting
	// "(?:ignore|disregard) ..." into one expression per verb gives each a literal prefix.
	exprs []string
	// lower: the expressions are written in lower case and run on the ASCII-lowered
	// text, so the match ignores ASCII case and keeps its literal prefix ((?i) has none).
	lower bool
	// wordStart: a match that begins with a word character must not follow one, as if
	// the expression began with \b; checked in Go so that the expression keeps its
	// literal prefix. A match dropped by this rule still consumes its span, as below.
	wordStart bool
	// anchors and needDigit make the prefilter (see prefilter).
	anchors   []string
	needDigit bool
	// window > 0 declares that every match is shorter than window bytes and begins with
	// a byte of first. Such a pattern is tried, anchored, only at positions holding such
	// a byte (at a word start, when wordStart), on the next window bytes.
	window int
	first  string
	// quick, for window patterns, is a cheap necessary condition on the window (a
	// digit count, say) checked before the expression is tried.
	quick func(window string) bool
	// extendLeft: each expression match is widened leftwards over these bytes (at least
	// one), as an e-mail's local part before the "@" the expression starts with.
	extendLeft string
	check      func(string) bool
	checkName  string
	// secret: masks show nothing of a match.
	secret bool
}

// pattern is one compiled expression of a def.
type pattern struct {
	id, category, description string
	re                        *regexp.Regexp
	anchored                  *regexp.Regexp // "^(?:expr)", for window patterns
	lower, wordStart          bool
	filter                    *prefilter // nil: none
	window                    int
	quick                     func(string) bool
	first, extendLeft         *[256]bool
	check                     func(string) bool
	checkName                 string
	reveal                    bool
}

// build compiles d into one pattern per expression. It panics on a bad expression: defs
// are package data, checked by the tests.
func (d def) build() []*pattern {
	out := make([]*pattern, 0, len(d.exprs))
	var filter *prefilter
	if len(d.anchors) > 0 || d.needDigit {
		filter = &prefilter{anchors: d.anchors, needDigit: d.needDigit}
	}
	for _, expr := range d.exprs {
		p := &pattern{
			id: d.id, category: d.category, description: d.description, re: regexp.MustCompile(expr),
			lower: d.lower, wordStart: d.wordStart, filter: filter,
			window: d.window, quick: d.quick, first: byteSet(d.first), extendLeft: byteSet(d.extendLeft),
			check: d.check, checkName: d.checkName, reveal: !d.secret,
		}
		if d.window > 0 {
			p.anchored = regexp.MustCompile(`^(?:` + expr + `)`)
		}
		out = append(out, p)
	}
	return out
}

func byteSet(s string) *[256]bool {
	if s == "" {
		return nil
	}
	var set [256]bool
	for i := 0; i < len(s); i++ {
		set[s[i]] = true
	}
	return &set
}

// prefilter is a cheap test a text must pass before a pattern's expressions run: it
// must hold an ASCII digit when needDigit is set, and one of anchors (lower-case
// literals, one of which every match contains) when anchors is not empty. The patterns
// of one def share their prefilter, and a text remembers each verdict, so it is worked
// out once per def and text.
type prefilter struct {
	anchors   []string
	needDigit bool
}

func (f *prefilter) pass(t *text) bool {
	if f.needDigit && !t.hasDigit {
		return false
	}
	if len(f.anchors) == 0 {
		return true
	}
	for _, a := range f.anchors {
		if strings.Contains(t.lower, a) {
			return true
		}
	}
	return false
}

// mayMatch reports whether t passes p's prefilter.
func (p *pattern) mayMatch(t *text) bool {
	if p.filter == nil {
		return true
	}
	passed, ok := t.filtered[p.filter]
	if !ok {
		passed = p.filter.pass(t)
		if t.filtered == nil {
			t.filtered = map[*prefilter]bool{}
		}
		t.filtered[p.filter] = passed
	}
	return passed
}

// each calls fn with the byte span of every accepted match, in order, until fn returns
// false. Matches do not overlap; a match the word-start rule or the check rejects still
// consumes its span, as regexp.FindAll would.
func (p *pattern) each(t *text, fn func(start, end int) bool) {
	if !p.mayMatch(t) {
		return
	}
	s := t.scanned
	if p.lower {
		s = t.lower
	}
	accept := func(start, end int) bool {
		if p.wordStart && start > 0 && isWordByte(s[start]) && isWordByte(s[start-1]) {
			return true
		}
		if p.check != nil && !p.check(t.scanned[start:end]) {
			return true
		}
		return fn(start, end)
	}
	if p.window > 0 {
		p.eachWindowed(s, accept)
		return
	}
	prevEnd := 0
	for _, loc := range p.re.FindAllStringIndex(s, maxRawMatches) {
		start, end := loc[0], loc[1]
		if start == end {
			continue // an empty match says nothing
		}
		if p.extendLeft != nil {
			for start > prevEnd && p.extendLeft[s[start-1]] {
				start--
			}
			if start == loc[0] {
				continue // no local part: not a match, and it consumes nothing
			}
		}
		prevEnd = end
		if !accept(start, end) {
			return
		}
	}
}

// eachWindowed tries the anchored expression at every position that can begin a match,
// on a window of p.window bytes, skipping positions inside the previous match. Each try
// reads at most p.window bytes, so the whole scan is linear in the text.
func (p *pattern) eachWindowed(s string, accept func(start, end int) bool) {
	found := 0
	for pos := 0; pos < len(s) && found < maxRawMatches; pos++ {
		c := s[pos]
		if !p.first[c] || p.wordStart && pos > 0 && isWordByte(c) && isWordByte(s[pos-1]) {
			continue
		}
		w := s[pos:min(pos+p.window, len(s))]
		if p.quick != nil && !p.quick(w) {
			continue
		}
		loc := p.anchored.FindStringIndex(w)
		if loc == nil || loc[1] == 0 {
			continue
		}
		found++
		if !accept(pos, pos+loc[1]) {
			return
		}
		pos += loc[1] - 1
	}
}

func isWordByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_'
}

// text is one field of a request, prepared once for every pattern that scans it.
type text struct {
	field string
	// scanned is the field cut to the scan limit at a UTF-8 boundary.
	scanned string
	// lower is scanned with ASCII letters lowered (same length, same offsets).
	lower     string
	hasDigit  bool
	truncated bool
	// filtered remembers prefilter verdicts for this text.
	filtered map[*prefilter]bool
}

func newText(field, s string, limit int) *text {
	t := &text{field: field, scanned: s}
	if limit > 0 && len(s) > limit {
		cut := limit
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		t.scanned, t.truncated = s[:cut], true
	}
	t.lower = lowerASCII(t.scanned)
	t.hasDigit = strings.ContainsAny(t.scanned, "0123456789")
	return t
}

// lowerASCII lowers A-Z only, so byte offsets stay those of s (strings.ToLower may
// change the length of some non-ASCII characters).
func lowerASCII(s string) string {
	i := strings.IndexFunc(s, func(r rune) bool { return 'A' <= r && r <= 'Z' })
	if i < 0 {
		return s
	}
	b := []byte(s)
	for ; i < len(b); i++ {
		if c := b[i]; 'A' <= c && c <= 'Z' {
			b[i] = c + ('a' - 'A')
		}
	}
	return string(b)
}

// maxMaskedRunes bounds a masked copy, so a long match does not come back long.
const maxMaskedRunes = 64

// mask hides a matched text: every character becomes "*" except, when reveal is true,
// the last quarter of the characters, at most four (so "4111 1111 1111 1111" becomes
// "***************1111" and "123-45-6789" becomes "*********89"). The stars of a match
// longer than 64 characters are cut to make the copy 64 characters long.
func mask(s string, reveal bool) string {
	n := utf8.RuneCountInString(s)
	keep := 0
	if reveal {
		keep = min(n/4, 4)
	}
	stars := min(n, maxMaskedRunes) - keep
	var b strings.Builder
	b.Grow(stars + 4*keep)
	b.WriteString(strings.Repeat("*", stars))
	if keep > 0 {
		cut := len(s)
		for range keep {
			_, size := utf8.DecodeLastRuneInString(s[:cut])
			cut -= size
		}
		b.WriteString(s[cut:])
	}
	return b.String()
}
