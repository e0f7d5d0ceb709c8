package search

import (
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// maxTokenLen drops "words" longer than this (base64 blobs, hashes): they
// never match a query and only grow the index.
const maxTokenLen = 40

// Tokenize splits s into lower-case search terms: it breaks on anything
// that is not a letter or digit, between a lower-case letter and an upper-case
// one (camelCase), before the last capital of a run followed by a lower-case
// letter (HTTPServer → http, server) and between letters and digits
// (s3 → s, 3; v2api → v, 2, api). snake_case, kebab-case and dotted names
// therefore split into their words. A run split only by case (GitHub,
// PromQL) is also given whole, as users type it as one word, and so is a
// short run mixing letters and digits (s3, k8s, ec2). Terms are not
// stemmed; see Stem.
func Tokenize(s string) []string {
	var out []string
	forEachToken(s, func(tok string) { out = append(out, tok) })
	return out
}

// forEachToken calls fn with each lower-cased token of s, without
// allocating the list.
func forEachToken(s string, fn func(string)) {
	start := -1 // byte offset of the current token, -1 outside one
	run := -1   // byte offset of the current run of letters and digits
	var prev rune
	var letters, digits, camel bool
	// endRun also emits whole a run split by case (GitHub, PromQL), which
	// users type as one word, and a short one that mixes letters and
	// digits (s3, k8s, ec2, md5).
	endRun := func(end int) {
		if run >= 0 && end-run <= maxTokenLen && (camel && !digits || letters && digits && end-run <= 6) {
			fn(lower(s[run:end]))
		}
		run, letters, digits, camel = -1, false, false, false
	}
	emit := func(end int) {
		if start >= 0 && end > start {
			tok := s[start:end]
			if len(tok) <= maxTokenLen {
				fn(lower(tok))
			}
		}
		start = -1
	}
	for i, r := range s {
		if r == utf8.RuneError || !(unicode.IsLetter(r) || unicode.IsDigit(r)) {
			emit(i)
			endRun(i)
			prev = 0
			continue
		}
		if run < 0 {
			run = i
		}
		if unicode.IsDigit(r) {
			digits = true
		} else {
			letters = true
		}
		if start < 0 {
			start = i
			prev = r
			continue
		}
		split := false
		switch {
		case unicode.IsDigit(r) != unicode.IsDigit(prev):
			split = true
		case unicode.IsUpper(r) && unicode.IsLower(prev):
			split, camel = true, true
		case unicode.IsLower(r) && unicode.IsUpper(prev) && i-start > utf8.RuneLen(prev):
			// "HTTPServer": the S of Server starts a new word, so split
			// before the previous rune.
			p := i - utf8.RuneLen(prev)
			emit(p)
			start, camel = p, true
		}
		if split {
			emit(i)
			start = i
		}
		prev = r
	}
	emit(len(s))
	endRun(len(s))
}

// lower lower-cases an ASCII token without allocating when it already is.
func lower(s string) string {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= utf8.RuneSelf || ('A' <= c && c <= 'Z') {
			return strings.ToLower(s)
		}
	}
	return s
}

// Stem reduces an English word to a crude stem so that inflections meet:
// plurals (issues, entries, boxes), -ing and -ed (creating, created), a
// doubled final consonant left by them (running, committed) and a final e
// (create): "create", "creates", "creating" and "created" all stem to
// "creat". It is deliberately light — a query and a document are stemmed
// alike, so only the agreement of inflections matters, not linguistics.
// Words of three letters or fewer, and words with digits, are kept.
func Stem(w string) string {
	if len(w) <= 3 || !asciiLetters(w) {
		return w
	}
	if keep[w] {
		return w
	}
	switch {
	case strings.HasSuffix(w, "ies") && len(w) > 4:
		w = w[:len(w)-3] + "y"
	case strings.HasSuffix(w, "sses"):
		w = w[:len(w)-2]
	case strings.HasSuffix(w, "xes"), strings.HasSuffix(w, "zes"),
		strings.HasSuffix(w, "ches"), strings.HasSuffix(w, "shes"):
		w = w[:len(w)-2]
	case strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") &&
		!strings.HasSuffix(w, "us") && !strings.HasSuffix(w, "is"):
		w = w[:len(w)-1]
	}
	switch {
	case strings.HasSuffix(w, "ied") && len(w) > 4:
		w = w[:len(w)-3] + "y"
	case strings.HasSuffix(w, "ing") && len(w) >= 6 && hasVowel(w[:len(w)-3]):
		w = undouble(w[:len(w)-3])
	case strings.HasSuffix(w, "ed") && len(w) >= 5 && w[len(w)-3] != 'e' && hasVowel(w[:len(w)-2]):
		w = undouble(w[:len(w)-2])
	}
	if len(w) >= 4 && w[len(w)-1] == 'e' {
		w = w[:len(w)-1]
	}
	return w
}

// keep holds words the suffix rules would maim and whose inflections do not
// matter for finding tools.
var keep = map[string]bool{
	"alias": true, "canvas": true, "atlas": true, "always": true, "news": true,
	"series": true, "species": true, "embed": true, "shred": true, "https": true,
	"redis": true, "kubernetes": true, "jenkins": true, "postgres": true,
	"mongodb": true, "sms": true, "aws": true, "dns": true, "ssh": true,
}

func asciiLetters(w string) bool {
	for i := 0; i < len(w); i++ {
		if c := w[i]; c < 'a' || c > 'z' {
			return false
		}
	}
	return true
}

func hasVowel(w string) bool { return strings.ContainsAny(w, "aeiouy") }

// undouble drops one of a doubled final consonant (runn → run, committ →
// commit) but keeps ll, ss, zz and short stems (add).
func undouble(w string) string {
	n := len(w)
	if n >= 4 && w[n-1] == w[n-2] && !strings.ContainsRune("aeioulsz", rune(w[n-1])) {
		return w[:n-1]
	}
	return w
}

// synonyms maps a stemmed query term to stemmed terms that mean nearly the
// same for tools; they are searched at a lower weight (synonymWeight) so
// an exact word still wins. Built on first search, not at start-up.
var synonyms = sync.OnceValue(func() map[string][]string { return buildSynonyms(synonymGroups) })

var synonymGroups = [][]string{
	{"create", "new", "add", "make", "insert", "open"},
	{"delete", "remove", "destroy", "drop", "erase"},
	{"get", "fetch", "read", "retrieve", "show", "view", "describe", "load"},
	{"list", "enumerate", "browse"},
	{"search", "find", "query", "lookup", "filter"},
	{"update", "edit", "modify", "change", "patch", "set"},
	{"send", "post", "publish", "notify"},
	{"run", "execute", "exec", "invoke", "trigger", "start"},
	{"stop", "cancel", "halt", "terminate", "kill"},
	{"write", "save", "store", "put"},
	{"issue", "ticket", "bug"},
	{"pr", "pull"},
	{"repo", "repository"},
	{"dir", "directory", "folder"},
	{"message", "msg", "chat"},
	{"db", "database", "sql"},
	{"k8s", "kubernetes", "kube", "cluster"},
	{"pod", "container"},
	{"user", "member", "person", "account"},
	{"doc", "document", "page"},
	{"comment", "reply", "note"},
	{"log", "logs"},
	{"screenshot", "capture", "snapshot"},
	{"navigate", "goto", "visit", "browse"},
	{"click", "press", "tap"},
	{"payment", "charge", "invoice"},
	{"error", "exception", "crash"},
	{"deploy", "release", "rollout"},
	{"file", "files"},
	{"branch", "ref"},
	{"bucket", "s3"},
	{"email", "mail"},
	{"calendar", "event", "meeting"},
}

func buildSynonyms(groups [][]string) map[string][]string {
	m := map[string][]string{}
	for _, g := range groups {
		stems := make([]string, len(g))
		for i, w := range g {
			stems[i] = Stem(w)
		}
		for _, a := range stems {
			for _, b := range stems {
				if a != b && !contains(m[a], b) {
					m[a] = append(m[a], b)
				}
			}
		}
	}
	return m
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
