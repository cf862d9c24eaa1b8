package consensus

import (
	"maps"
	"slices"
	"strings"
)

// Level is how much is at stake in a prompt.
type Level string

// The stakes levels, lowest first.
const (
	LevelLow      Level = "low"
	LevelMedium   Level = "medium"
	LevelHigh     Level = "high"
	LevelCritical Level = "critical"
)

var levelOrder = []Level{LevelLow, LevelMedium, LevelHigh, LevelCritical}

func (l Level) rank() int { return slices.Index(levelOrder, l) }

// Requirement is what a stakes level asks of a consensus run.
type Requirement struct {
	// Level is the stakes level this requirement belongs to.
	Level Level `json:"level"`
	// MinModels is how many models should answer.
	MinModels int `json:"min_models"`
	// MinAgreement is the agreement score the answers should reach.
	MinAgreement float64 `json:"min_agreement"`
	// HumanReview is "none", "on_disagreement" (when the run misses MinModels or
	// MinAgreement) or "always".
	HumanReview string `json:"human_review"`
	// Description says what the level means.
	Description string `json:"description"`
}

// requirements, in level order.
var requirements = []Requirement{
	{LevelLow, 1, 0, "none", "No sensitive domain named: one model's answer is enough."},
	{LevelMedium, 2, 0.6, "none", "Everyday advice in a sensitive domain: two models should broadly agree."},
	{LevelHigh, 3, 0.75, "on_disagreement", "Decisions about health, law, money or safety: three models should agree, and a person should look when they do not."},
	{LevelCritical, 4, 0.85, "always", "Danger to life, liberty or livelihood: four models should agree closely, and a person should review the answer in any case."},
}

// RequirementFor returns what level asks of a consensus run (low's for an unknown level).
func RequirementFor(level Level) Requirement {
	return requirements[max(level.rank(), 0)]
}

// keywords is the stakes table: domain -> level -> words and phrases, lower case.
var keywords = map[string]map[Level]string{
	"medical": {
		LevelCritical: "overdose, overdosed, anaphylaxis, anaphylactic, heart attack, cardiac arrest, stroke, seizure, seizures, lethal dose, poisoning, sepsis",
		LevelHigh: "diagnosis, diagnose, diagnosed, dosage, dose, doses, prescription, prescribe, prescribed, medication, medications, " +
			"chemotherapy, surgery, cancer, tumor, tumour, insulin, opioid, opioids, antibiotic, antibiotics, pregnant, pregnancy, " +
			"vaccine, contraindication, contraindicated, drug interaction, side effects",
		LevelMedium: "symptom, symptoms, treatment, therapy, clinical, patient, patients, disease, infection, allergy, allergic, " +
			"blood pressure, mental health, depression, anxiety, doctor",
	},
	"legal": {
		LevelCritical: "death penalty, extradition, criminal defense",
		LevelHigh: "lawsuit, sue, sued, litigation, indictment, indicted, felony, arrest, arrested, criminal charges, custody, " +
			"deportation, asylum, immigration, subpoena, court order, plea, bail, eviction, restraining order, divorce",
		LevelMedium: "contract, contracts, liability, attorney, lawyer, legal advice, copyright, trademark, patent, compliance, " +
			"gdpr, hipaa, terms of service, nda, lease, testament",
	},
	"financial": {
		LevelCritical: "insider trading, money laundering, life savings",
		LevelHigh: "investment, investments, invest, mortgage, bankruptcy, loan, loans, retirement, pension, 401k, tax return, " +
			"wire transfer, securities, stock, stocks, options trading, margin call, leverage, credit score, debt, insurance claim",
		LevelMedium: "budget, salary, invoice, interest rate, crypto, cryptocurrency, bitcoin, tax, taxes, savings, accounting",
	},
	"safety": {
		LevelCritical: "suicide, suicidal, self harm, kill myself, bomb, explosive, explosives, detonator, nerve agent, bioweapon, " +
			"ricin, sarin, anthrax",
		LevelHigh:   "weapon, weapons, gun, guns, firearm, firearms, poison, toxic, hazardous, lethal, carbon monoxide, electrocution, radiation",
		LevelMedium: "injury, injured, emergency, fire, accident, hazard, dangerous",
	},
	"security": {
		LevelCritical: "ransomware, zero day, rootkit, backdoor",
		LevelHigh: "exploit, malware, phishing, vulnerability, cve, privilege escalation, password, passwords, credentials, " +
			"api key, encryption key, private key, sql injection",
		LevelMedium: "firewall, authentication, access control, security patch, vpn, penetration test",
	},
}

// keywordNode is a word trie: a path of words from the root spells a keyword.
type keywordNode struct {
	next map[string]*keywordNode
	// keyword, domain and level are set on nodes that end a keyword.
	keyword, domain string
	level           Level
}

var keywordTrie = func() *keywordNode {
	root := &keywordNode{next: map[string]*keywordNode{}}
	for domain, byLevel := range keywords {
		for level, list := range byLevel {
			for _, kw := range strings.Split(list, ",") {
				n := root
				for _, w := range words(kw) { // the text's tokenizer, so "self-harm" and "self harm" agree
					if n.next[w] == nil {
						n.next[w] = &keywordNode{next: map[string]*keywordNode{}}
					}
					n = n.next[w]
				}
				n.keyword, n.domain, n.level = strings.Join(words(kw), " "), domain, level
			}
		}
	}
	return root
}()

// DomainMatch is what one domain's keywords found in a text.
type DomainMatch struct {
	// Domain is medical, legal, financial, safety or security.
	Domain string `json:"domain"`
	// Level is the highest level among the domain's matched keywords.
	Level Level `json:"level"`
	// Keywords are the matched keywords, each once, in order of first appearance.
	Keywords []string `json:"keywords"`
	// Matches counts every occurrence.
	Matches int `json:"matches"`
}

// Classification is the stakes of a text.
type Classification struct {
	// Level is the highest level of any matched keyword; low when none matched.
	Level Level `json:"level"`
	// Domains are the domains with matches, highest level first, then by name.
	Domains []DomainMatch `json:"domains"`
	// Requirement is what Level asks of a consensus run.
	Requirement Requirement `json:"requirement"`
}

// ClassifyStakes matches text against the keyword table: whole words and phrases,
// ignoring case and punctuation between words ("Heart-Attack" matches "heart attack").
// From each word it follows the keyword trie at most as many words as the longest
// keyword has (three), so it runs in time linear in the text.
func ClassifyStakes(text string) Classification {
	byDomain := map[string]*DomainMatch{}
	level := LevelLow
	ws := words(text)
	for i := range ws {
		n := keywordTrie
		for j := i; j < len(ws); j++ {
			if n = n.next[ws[j]]; n == nil {
				break
			}
			if n.keyword == "" {
				continue
			}
			dm := byDomain[n.domain]
			if dm == nil {
				dm = &DomainMatch{Domain: n.domain, Level: LevelLow, Keywords: []string{}}
				byDomain[n.domain] = dm
			}
			dm.Matches++
			if !slices.Contains(dm.Keywords, n.keyword) {
				dm.Keywords = append(dm.Keywords, n.keyword)
			}
			if n.level.rank() > dm.Level.rank() {
				dm.Level = n.level
			}
			if n.level.rank() > level.rank() {
				level = n.level
			}
		}
	}
	c := Classification{Level: level, Domains: []DomainMatch{}, Requirement: RequirementFor(level)}
	for _, dm := range byDomain {
		c.Domains = append(c.Domains, *dm)
	}
	slices.SortFunc(c.Domains, func(a, b DomainMatch) int {
		if d := b.Level.rank() - a.Level.rank(); d != 0 {
			return d
		}
		return strings.Compare(a.Domain, b.Domain)
	})
	return c
}

// DomainKeywords lists one domain's keywords by level.
type DomainKeywords struct {
	// Domain names the domain; Keywords are its words and phrases by level.
	Domain   string             `json:"domain"`
	Keywords map[Level][]string `json:"keywords"`
}

// StakesTable is the response of GET /api/consensus/stakes.
type StakesTable struct {
	// Levels are the requirements of each level, lowest first.
	Levels []Requirement `json:"levels"`
	// Domains are the keyword lists, by domain name.
	Domains []DomainKeywords `json:"domains"`
	// Matching says how keywords are matched.
	Matching string `json:"matching"`
}

// Stakes returns the keyword table and what each level implies, a fresh copy each call.
func Stakes() StakesTable {
	t := StakesTable{
		Levels:   slices.Clone(requirements),
		Matching: "whole words and phrases, case-insensitive, words split on anything but letters and digits; the text's level is its highest matched keyword's, low when none matches",
	}
	for _, domain := range slices.Sorted(maps.Keys(keywords)) {
		dk := DomainKeywords{Domain: domain, Keywords: map[Level][]string{}}
		for level, list := range keywords[domain] {
			var kws []string
			for _, kw := range strings.Split(list, ",") {
				kws = append(kws, strings.Join(words(kw), " "))
			}
			slices.Sort(kws)
			dk.Keywords[level] = kws
		}
		t.Domains = append(t.Domains, dk)
	}
	return t
}
