package policy

import (
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"
)

// check runs one rule; ok is false when the rule did not fire.
func (r *compiledRule) check(req Request, texts map[string]*text, maxMatches int) (hit Hit, ok bool) {
	hit = Hit{RuleID: r.ID, Kind: r.Kind, Mode: r.Mode}
	switch r.Kind {
	case KindModelAllowlist:
		if req.Model == "" {
			hit.Message = "no model given; the allowlist cannot admit it"
			return hit, true
		}
		if r.allowsModel(req.Model) {
			return hit, false
		}
		hit.Message = fmt.Sprintf("model %q is not on the allowlist", req.Model)
		return hit, true
	case KindMaxCostPerCall:
		if req.CostUSD == nil || *req.CostUSD <= *r.Parameters.MaxUSD {
			return hit, false
		}
		hit.Message = fmt.Sprintf("cost %.6g USD exceeds the per-call limit of %.6g USD", *req.CostUSD, *r.Parameters.MaxUSD)
		return hit, true
	case KindMaxOutputLength:
		n := utf8.RuneCountInString(req.Output)
		if n <= r.Parameters.MaxChars {
			return hit, false
		}
		hit.Message = fmt.Sprintf("output is %d characters, over the limit of %d", n, r.Parameters.MaxChars)
		return hit, true
	case KindPromptPattern:
		return r.checkPatterns(hit, texts, maxMatches)
	}
	return hit, false // New accepts no other kind
}

func (r *compiledRule) allowsModel(model string) bool {
	model = strings.ToLower(model)
	for _, m := range r.models {
		if globMatch(m, model) {
			return true
		}
	}
	return false
}

// checkPatterns scans the rule's fields with each of its patterns. Matches are listed
// by field, then offset, at most maxMatches of them. Each pattern stops after
// maxMatches+1 matches in a field (no later match of it could be listed), so the counts
// in the message are lower bounds when the hit is truncated.
func (r *compiledRule) checkPatterns(hit Hit, texts map[string]*text, maxMatches int) (Hit, bool) {
	type found struct {
		p          *pattern
		start, end int
	}
	total := 0
	categories := map[string]int{}
	var order []string
	for _, f := range r.Parameters.fieldsOrDefault() {
		t := texts[f]
		if t == nil {
			continue
		}
		var matches []found
		for _, p := range r.patterns {
			n := 0
			p.each(t, func(start, end int) bool {
				matches = append(matches, found{p, start, end})
				n++
				return n <= maxMatches
			})
			if n > maxMatches {
				hit.MatchesTruncated = true
			}
		}
		slices.SortStableFunc(matches, func(a, b found) int { return a.start - b.start })
		for _, m := range matches {
			total++
			if categories[m.p.category] == 0 {
				order = append(order, m.p.category)
			}
			categories[m.p.category]++
			if len(hit.Matches) == maxMatches {
				hit.MatchesTruncated = true
				continue
			}
			hit.Matches = append(hit.Matches, Match{
				Field: f, Category: m.p.category, Pattern: m.p.id, Start: m.start, End: m.end,
				Masked: mask(t.scanned[m.start:m.end], m.p.reveal),
			})
		}
	}
	if total == 0 {
		return hit, false
	}
	parts := make([]string, len(order))
	for i, c := range order {
		parts[i] = fmt.Sprintf("%s (%d)", c, categories[c])
	}
	more := ""
	if hit.MatchesTruncated {
		more = " or more"
	}
	hit.Message = fmt.Sprintf("%d%s matches: %s", total, more, strings.Join(parts, ", "))
	return hit, true
}

// globMatch reports whether name matches pattern, where "*" matches any run of bytes and
// every other byte only itself. It runs in O(len(pattern)·len(name)) at worst, without
// recursion: on a mismatch it retries from the last "*", one byte further.
func globMatch(pattern, name string) bool {
	p, n := 0, 0
	star, starN := -1, 0
	for n < len(name) {
		switch {
		case p < len(pattern) && pattern[p] == '*':
			star, starN = p, n
			p++
		case p < len(pattern) && pattern[p] == name[n]:
			p++
			n++
		case star >= 0:
			p = star + 1
			starN++
			n = starN
		default:
			return false
		}
	}
	for p < len(pattern) && pattern[p] == '*' {
		p++
	}
	return p == len(pattern)
}
