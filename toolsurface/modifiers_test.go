package toolsurface

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseToolModifiers(t *testing.T) {
	m, err := ParseToolModifiers("default, Defer(mcp__github__*), NoDefer(mcp__time__now),defer(mcp__jira mcp__Slack-Bot__post.message)")
	if err != nil {
		t.Fatal(err)
	}
	want := Modifiers{
		Default: true,
		Defer:   []Pattern{{Server: "github"}, {Server: "jira"}, {Server: "Slack-Bot", Tool: "post.message"}},
		NoDefer: []Pattern{{Server: "time", Tool: "now"}},
	}
	if diff := cmp.Diff(want, m); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
	for _, c := range []struct {
		server, tool  string
		deferred, set bool
	}{
		{"github", "create_issue", true, true},
		{"time", "now", false, true},    // NoDefer
		{"time", "other", false, false}, // no modifier: the config decides
		{"jira", "x", true, true},
		{"slack_bot", "post_message", true, true}, // '-' and '.' count as '_', case ignored
		{"slack-bot", "post_messages", false, false},
		{"githubx", "a", false, false}, // a server prefix is not a match
	} {
		d, s := m.Decide(c.server, c.tool)
		if d != c.deferred || s != c.set {
			t.Errorf("Decide(%s, %s) = %v, %v; want %v, %v", c.server, c.tool, d, s, c.deferred, c.set)
		}
	}
	t.Run("NoDefer beats Defer whatever the order", func(t *testing.T) {
		for _, s := range []string{"NoDefer(mcp__a__b),Defer(mcp__a__b)", "Defer(mcp__*),NoDefer(mcp__a)"} {
			m, err := ParseToolModifiers(s)
			if err != nil {
				t.Fatal(err)
			}
			if d, set := m.Decide("a", "b"); d || !set {
				t.Errorf("%s: Decide(a, b) = %v, %v; want kept loaded", s, d, set)
			}
		}
	})
	t.Run("empty and default change nothing", func(t *testing.T) {
		for _, s := range []string{"", "default", " , default ,"} {
			m, err := ParseToolModifiers(s)
			if err != nil || !m.IsZero() {
				t.Errorf("%q: %+v, %v", s, m, err)
			}
		}
	})
}

func TestParseToolModifiersErrors(t *testing.T) {
	for in, want := range map[string]string{
		"Bash":                        `unknown item "Bash"`,
		"Defer()":                     "Defer() names no tools",
		"Defer(mcp__git*)":            "* may only replace a whole last segment",
		"NoDefer(mcp__github__get_*)": "* may only replace a whole last segment",
		"Defer(github)":               "not an MCP tool pattern",
		"Defer(*)":                    "not an MCP tool pattern",
		"Defer(mcp__)":                "names no server",
		"Defer(mcp__gh__)":            "ends in __ without a tool",
		"Defer(mcp__g h)":             "", // two patterns: "mcp__g" and "h" → h fails
		"Maybe(mcp__a)":               `unknown modifier "Maybe"`,
		"Defer(mcp__a":                "unclosed (",
		"Defer(mcp__a))":              "unmatched )",
		"Defer((mcp__a))":             "nested parentheses",
		"Defer(mcp__a/b)":             `holds '/'`,
	} {
		_, err := ParseToolModifiers(in)
		if err == nil {
			t.Errorf("ParseToolModifiers(%q) = nil error", in)
			continue
		}
		if strings.ContainsAny(err.Error(), "\n\r") || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseToolModifiers(%q) = %q, want one line containing %q", in, err, want)
		}
	}
}

// FuzzToolModifiers: the parser never panics, errors are one line, and
// whatever it accepts renders back (String) to the same modifiers, which
// decide every tool the same way.
func FuzzToolModifiers(f *testing.F) {
	for _, s := range []string{
		"default,Defer(mcp__github__*),NoDefer(mcp__time__now)",
		"Defer(mcp__*)", "nodefer(MCP__A-B.c__x y)", "Defer((", ",,,", "Defer(mcp__a__b__c)",
		"Defer(mcp__\xff)", "NoDefer(mcp__日本__x)",
	} {
		f.Add(s, "github", "create_issue")
	}
	f.Fuzz(func(t *testing.T, s, server, tool string) {
		m, err := ParseToolModifiers(s)
		if err != nil {
			if strings.ContainsAny(err.Error(), "\n\r") {
				t.Fatalf("error has more than one line: %q", err)
			}
			return
		}
		back, err := ParseToolModifiers(m.String())
		if err != nil {
			t.Fatalf("String() = %q does not parse: %v", m.String(), err)
		}
		d1, s1 := m.Decide(server, tool)
		d2, s2 := back.Decide(server, tool)
		if d1 != d2 || s1 != s2 {
			t.Fatalf("%q and its rendering %q decide (%s, %s) differently", s, m.String(), server, tool)
		}
		if back.String() != m.String() {
			t.Fatalf("rendering is not stable: %q → %q", m.String(), back.String())
		}
	})
}
