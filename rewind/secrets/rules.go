package secrets

import (
	"fmt"
	"slices"
	"strings"
	"sync"

	ahocorasick "github.com/BobuSumisu/aho-corasick"
	"github.com/spf13/viper"
	"github.com/zricethezav/gitleaks/v8/config"
)

// ruleSet is gitleaks' default configuration, ready to match: its rules in
// the order the configuration lists them, the keywords of all of them in
// one trie (each rule names its own by their numbers), and the allowlists
// that hold for every rule.
type ruleSet struct {
	rules    []rule
	keywords []string // lowercase, each once; a keyword's number is its place here
	trie     *ahocorasick.Trie
	allow    []*config.Allowlist
}

// rule is one of gitleaks' rules and the numbers of its keywords.
type rule struct {
	config.Rule
	keywords []int
	generic  bool // a catch-all rule, which a specific one on the same line overrules
	// reach, when windowed, bounds where a match holding one of the
	// rule's keywords lies (see window).
	reach    reach
	windowed bool
}

var (
	loadOnce sync.Once
	loaded   *ruleSet
	loadErr  error
)

// rules returns the rule set, loaded on the first call: never at program
// start, since every run of rewind would pay for it and few scan.
func rules() *ruleSet {
	loadOnce.Do(func() { loaded, loadErr = load() })
	if loadErr != nil {
		// The configuration is gitleaks', built into the binary: it loads
		// or the build is broken.
		panic(fmt.Sprintf("secrets: gitleaks' built-in rules do not load: %v", loadErr))
	}
	return loaded
}

// load reads config.DefaultConfig as gitleaks' own detector reads it
// (detect.NewDetectorDefaultConfig), through a viper instance of its own.
func load() (*ruleSet, error) {
	v := viper.New()
	v.SetConfigType("toml")
	if err := v.ReadConfig(strings.NewReader(config.DefaultConfig)); err != nil {
		return nil, err
	}
	var vc config.ViperConfig
	if err := v.Unmarshal(&vc); err != nil {
		return nil, err
	}
	cfg, err := vc.Translate()
	if err != nil {
		return nil, err
	}
	rs := &ruleSet{allow: cfg.Allowlists}
	for k := range cfg.Keywords {
		rs.keywords = append(rs.keywords, k)
	}
	slices.Sort(rs.keywords)
	number := make(map[string]int, len(rs.keywords))
	for i, k := range rs.keywords {
		number[k] = i
	}
	rs.trie = ahocorasick.NewTrieBuilder().AddStrings(rs.keywords).Build()
	for _, r := range cfg.GetOrderedRules() {
		// A composite rule (reported only beside the rules it requires)
		// and a rule that only serves one are left out: the default set
		// has neither.
		if len(r.RequiredRules) > 0 || r.SkipReport {
			continue
		}
		ru := rule{Rule: r, generic: strings.Contains(strings.ToLower(r.RuleID), "generic")}
		for _, k := range r.Keywords {
			ru.keywords = append(ru.keywords, number[strings.ToLower(k)])
		}
		if r.Regex != nil && len(ru.keywords) > 0 {
			ru.reach, ru.windowed = reachOf(r.Regex.String())
		}
		rs.rules = append(rs.rules, ru)
	}
	return rs, nil
}

// pathAllowed reports whether allowlists leave the file at path unscanned
// (gitleaks' checkCommitOrPathAllowed, without commits): an OR list by its
// paths; an AND list by its paths when it has no regexes or stop words,
// which are checked against each finding instead.
func pathAllowed(path string, allowlists []*config.Allowlist) bool {
	if path == "" {
		return false
	}
	for _, a := range allowlists {
		if a.MatchCondition == config.AllowlistMatchAnd {
			if len(a.Regexes) > 0 || len(a.StopWords) > 0 {
				continue
			}
			if len(a.Commits) == 0 && len(a.Paths) > 0 && a.PathAllowed(path) {
				return true
			}
			continue
		}
		if a.PathAllowed(path) {
			return true
		}
	}
	return false
}

// findingAllowed reports whether allowlists let a finding pass as no secret
// (gitleaks' checkFindingAllowed, without commits): their regexes are
// matched against the secret, the whole match or the line, as each
// list's RegexTarget says, and their stop words looked for in the secret.
func findingAllowed(secret, match, line, path string, allowlists []*config.Allowlist) bool {
	for _, a := range allowlists {
		target := secret
		switch a.RegexTarget {
		case "match":
			target = match
		case "line":
			target = line
		}
		regexAllowed := a.RegexAllowed(target)
		stopWord, _ := a.ContainsStopWord(secret)
		if a.MatchCondition == config.AllowlistMatchAnd {
			all := true
			if len(a.Commits) > 0 {
				all = false // a finding outside git is of no commit
			}
			if len(a.Paths) > 0 && !a.PathAllowed(path) {
				all = false
			}
			if len(a.Regexes) > 0 && !regexAllowed {
				all = false
			}
			if len(a.StopWords) > 0 && !stopWord {
				all = false
			}
			if all {
				return true
			}
		} else if regexAllowed || stopWord {
			return true
		}
	}
	return false
}
