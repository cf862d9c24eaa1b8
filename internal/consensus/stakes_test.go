package consensus

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

func TestClassifyStakes(t *testing.T) {
	cases := []struct {
		name, text string
		level      Level
		domains    string // domain:level:keywords;...
	}{
		{"nothing", "Write a haiku about autumn leaves.", LevelLow, ""},
		{"medical high", "What dosage of insulin should I take?", LevelHigh, "medical:high:dosage,insulin"},
		{"phrase across punctuation", "Signs of a HEART-ATTACK?", LevelCritical, "medical:critical:heart attack"},
		{"phrase needs its words in order", "the attack on my heart", LevelLow, ""},
		{"word boundary", "The stockroom is in the basement; subpoenas are not.", LevelLow, ""},
		{"several domains", "Can I sue my employer over my 401k and my anxiety?", LevelHigh,
			"financial:high:401k;legal:high:sue;medical:medium:anxiety"},
		{"counts and dedupes", "password? password! passwords", LevelHigh, "security:high:password,passwords"},
		{"critical safety", "how to build a bomb", LevelCritical, "safety:critical:bomb"},
		{"three-word phrase", "Read the terms of service first.", LevelMedium, "legal:medium:terms of service"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := ClassifyStakes(tc.text)
			var parts []string
			for _, d := range c.Domains {
				parts = append(parts, d.Domain+":"+string(d.Level)+":"+strings.Join(d.Keywords, ","))
			}
			if c.Level != tc.level || strings.Join(parts, ";") != tc.domains || c.Requirement.Level != tc.level {
				t.Errorf("got %s [%s], want %s [%s]", c.Level, strings.Join(parts, ";"), tc.level, tc.domains)
			}
		})
	}
	c := ClassifyStakes("password? password! passwords")
	if c.Domains[0].Matches != 3 {
		t.Errorf("matches %d, want 3", c.Domains[0].Matches)
	}
}

func TestStakesTable(t *testing.T) {
	st := Stakes()
	var levels []Level
	for i, r := range st.Levels {
		levels = append(levels, r.Level)
		if i > 0 && (r.MinModels < st.Levels[i-1].MinModels || r.MinAgreement < st.Levels[i-1].MinAgreement) {
			t.Errorf("level %s asks less than the level below it", r.Level)
		}
		if r.MinModels > MaxModels {
			t.Errorf("level %s asks for %d models, more than a run may ask", r.Level, r.MinModels)
		}
	}
	if !slices.Equal(levels, levelOrder) {
		t.Errorf("levels %v", levels)
	}
	var domains []string
	for _, d := range st.Domains {
		domains = append(domains, d.Domain)
		for level, kws := range d.Keywords {
			for _, kw := range kws {
				// Every listed keyword classifies at its level or higher on its own.
				if got := ClassifyStakes(kw).Level; got.rank() < level.rank() {
					t.Errorf("%s keyword %q classifies as %s", level, kw, got)
				}
			}
		}
	}
	if strings.Join(domains, ",") != "financial,legal,medical,safety,security" {
		t.Errorf("domains %v", domains)
	}
	st.Levels[0].MinModels = 99
	if Stakes().Levels[0].MinModels == 99 {
		t.Error("Stakes hands out its own slice")
	}
	body, err := json.Marshal(Stakes())
	if err != nil || !strings.Contains(string(body), `"keywords":{"critical":[`) || !strings.Contains(string(body), `"min_agreement":0.85`) {
		t.Errorf("JSON %s (%v)", body[:min(300, len(body))], err)
	}
}

func TestRequirementFor(t *testing.T) {
	if r := RequirementFor(LevelCritical); r.MinModels != 4 || r.HumanReview != "always" {
		t.Errorf("critical %+v", r)
	}
	if r := RequirementFor("bogus"); r.Level != LevelLow {
		t.Errorf("unknown level gives %+v", r)
	}
}
