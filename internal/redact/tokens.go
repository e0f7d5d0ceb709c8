package redact

import (
	"regexp"
	"strings"
	"sync"
)

// TokenShape is one kind of credential recognised by its form alone,
// wherever it appears in text, whatever names it: a provider's API key or
// token with its fixed prefix, a JSON Web Token.
type TokenShape struct {
	// Name says whose credential it is, for documentation and tests.
	Name string
	// Example is a made-up credential of the shape (never a real one).
	Example string
	expr    string
	// leads are literal texts every match starts with, looked for before
	// the expression runs (a text holding none of any shape's leads is
	// passed over at the speed of strings.Contains).
	leads []string
	// generated reports that a match is a generated credential and not a
	// word that happens to start like one ("sk-learn-extension-name"):
	// nil takes every match.
	generated func(string) bool
}

// tokenShapes is the maintained list of credential shapes [String] removes
// from every text (docs/security.md, What is never logged, lists them).
// Add a provider here, with an example, and the fuzz target and the tests
// pick it up. Each expression takes the whole token, so a placeholder
// replaces it entirely; a match counts only where no letter or digit
// comes right before it (scrubTokens), so "API_TOKEN_ghp_…" is caught and
// "task-…" is not an "sk-" key.
var tokenShapes = []TokenShape{
	{Name: "GitHub token (ghp_, gho_, ghu_, ghs_, ghr_)", Example: "ghp_Zq8xW2vN4mT6kP0rS3uY5bA7cD9eF1gH2jK4",
		expr: `gh[pousr]_[A-Za-z0-9]{30,}`, leads: []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_"}},
	{Name: "GitHub fine-grained token (github_pat_)", Example: "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRS",
		expr: `github_pat_[A-Za-z0-9_]{22,}`, leads: []string{"github_pat_"}},
	{Name: "GitLab token (glpat-)", Example: "glpat-Zq8xW2vN4mT6kP0rS3uY",
		expr: `glpat-[A-Za-z0-9_\-]{20,}`, leads: []string{"glpat-"}},
	{Name: "Anthropic API key (sk-ant-)", Example: "sk-ant-api03-Zq8xW2vN4mT6kP0rS3uY5bA7cD9eF1gH2jK4",
		expr: `sk-ant-[A-Za-z0-9_\-]{20,}`, leads: []string{"sk-ant-"}},
	{Name: "OpenAI API key (sk-, sk-proj-, sk-svcacct-)", Example: "sk-proj-Zq8xW2vN4mT6kP0rS3uY5bA7cD9eF1gH2jK4",
		expr: `sk-[A-Za-z0-9_\-]{20,}`, leads: []string{"sk-"}, generated: lettersAndDigits},
	{Name: "Stripe secret or restricted key (sk_live_, rk_live_, sk_test_)", Example: "sk_live_Zq8xW2vN4mT6kP0rS3uY5bA7",
		expr: `[sr]k_(?:live|test)_[A-Za-z0-9]{16,}`, leads: []string{"sk_live_", "rk_live_", "sk_test_", "rk_test_"}},
	{Name: "AWS access key id (AKIA, ASIA)", Example: "AKIAZQ8XW2VN4MT6KP0R",
		expr: `(?:AKIA|ASIA)[A-Z0-9]{16}\b`, leads: []string{"AKIA", "ASIA"}},
	{Name: "Google API key (AIza)", Example: "AIzaSyZq8xW2vN4mT6kP0rS3uY5bA7cD9eF1gH2",
		expr: `AIza[A-Za-z0-9_\-]{35}`, leads: []string{"AIza"}},
	{Name: "Slack token (xoxb-, xoxp-, xoxa-, xoxr-, xoxs-, xoxe-)", Example: "xoxb-123456789012-1234567890123-Zq8xW2vN4mT6kP0rS3uY5bA7",
		expr: `xox[abeprs]-[A-Za-z0-9\-]{10,}`, leads: []string{"xoxa-", "xoxb-", "xoxe-", "xoxp-", "xoxr-", "xoxs-"}},
	{Name: "npm token (npm_)", Example: "npm_Zq8xW2vN4mT6kP0rS3uY5bA7cD9eF1gH2jK4",
		expr: `npm_[A-Za-z0-9]{36}\b`, leads: []string{"npm_"}},
	{Name: "Hugging Face token (hf_)", Example: "hf_ZqxWvNmTkPrSuYbAcDeFgHjKaBcDeFgHiJ",
		expr: `hf_[A-Za-z]{34}\b`, leads: []string{"hf_"}},
	{Name: "SendGrid API key (SG.)", Example: "SG.Zq8xW2vN4mT6kP0rS3uY5b.A7cD9eF1gH2jK4Zq8xW2vN4mT6kP0rS3uY5bA7cD9eF1g",
		expr: `SG\.[A-Za-z0-9_\-]{22}\.[A-Za-z0-9_\-]{43}`, leads: []string{"SG."}},
	// A JWS or JWE in compact form: its header is base64url JSON, so it
	// starts "eyJ" ({"), and so does a JWT's payload.
	{Name: "JSON Web Token (eyJ….eyJ….…)", Example: "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJhbGljZSJ9.c2lnbmF0dXJlLXNpZ25hdHVyZQ",
		expr: `eyJ[A-Za-z0-9_\-]{5,}\.eyJ[A-Za-z0-9_\-]{5,}\.[A-Za-z0-9_\-]*(?:\.[A-Za-z0-9_\-]*)?(?:\.[A-Za-z0-9_\-]*)?`, leads: []string{"eyJ"}},
}

// TokenShapes returns the credential shapes [String] removes from text.
func TokenShapes() []TokenShape { return append([]TokenShape(nil), tokenShapes...) }

// compiledShapes are tokenShapes compiled, and one expression matching
// any of them, to look at a text once when it holds none.
var compiledShapes = sync.OnceValues(func() (*regexp.Regexp, []*regexp.Regexp) {
	res := make([]*regexp.Regexp, len(tokenShapes))
	alts := make([]string, len(tokenShapes))
	for i, s := range tokenShapes {
		res[i] = regexp.MustCompile(s.expr)
		alts[i] = "(?:" + s.expr + ")"
	}
	return regexp.MustCompile(strings.Join(alts, "|")), res
})

// mayHoldToken reports whether s holds a lead of some shape: the
// expressions need to run only then.
func mayHoldToken(s string) bool {
	for i := range tokenShapes {
		for _, l := range tokenShapes[i].leads {
			if strings.Contains(s, l) {
				return true
			}
		}
	}
	return false
}

// scrubTokens replaces every credential of a known shape in s.
func scrubTokens(s string) string {
	if !mayHoldToken(s) {
		return s
	}
	all, each := compiledShapes()
	if !all.MatchString(s) {
		return s
	}
	for i, re := range each {
		s = replaceTokens(s, re, tokenShapes[i].generated)
	}
	return s
}

// replaceTokens replaces the matches of re in s that start a word (no
// letter or digit right before them) and that generated accepts.
func replaceTokens(s string, re *regexp.Regexp, generated func(string) bool) string {
	var b strings.Builder
	last := 0
	for _, m := range re.FindAllStringIndex(s, -1) {
		if m[0] > 0 && isAlnum(s[m[0]-1]) || generated != nil && !generated(s[m[0]:m[1]]) {
			continue
		}
		b.WriteString(s[last:m[0]])
		b.WriteString(Placeholder)
		last = m[1]
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

func isAlnum(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// lettersAndDigits reports whether s mixes letters and digits, as every
// generated key does and a hyphenated name rarely does.
func lettersAndDigits(s string) bool {
	var letter, digit bool
	for _, r := range s {
		switch {
		case r >= '0' && r <= '9':
			digit = true
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z':
			letter = true
		}
	}
	return letter && digit
}

// Tokens replaces every credential of a known shape ([TokenShapes]) in s
// with [Placeholder], and names the shapes it found (each once, in the
// list's order). Unlike [String], it leaves everything else alone: it is
// for data (a tool's result), where `password: x` in a document is text.
func Tokens(s string) (string, []string) {
	if !mayHoldToken(s) {
		return s, nil
	}
	all, each := compiledShapes()
	if !all.MatchString(s) {
		return s, nil
	}
	var names []string
	for i, re := range each {
		if out := replaceTokens(s, re, tokenShapes[i].generated); out != s {
			names = append(names, tokenShapes[i].Name)
			s = out
		}
	}
	return s, names
}
