package policy

import (
	"strings"
	"testing"
)

// grammarNever is an independent reading of the rule grammar (package doc)
// for the name part of
// a rule: true when the grammar says the rule matches no MCP tool.
func grammarNever(text string) bool {
	name := strings.TrimSpace(text)
	if i := strings.IndexByte(name, '('); i >= 0 {
		name = strings.TrimSpace(name[:i])
	}
	lower := strings.ToLower(strings.NewReplacer("-", "_", ".", "_").Replace(name))
	if !strings.HasPrefix(lower, "mcp__") || lower == "mcp__" {
		return true // bare *, other tools, no server
	}
	rest := lower[len("mcp__"):]
	stars := strings.Count(rest, "*")
	switch {
	case stars == 0:
		return false
	case stars > 1:
		return true
	case rest == "*":
		return false
	}
	return !strings.HasSuffix(rest, "__*") || rest == "__*"
}

// upperASCII upper-cases ASCII letters only (strings.ToUpper would turn
// some non-ASCII letters into ASCII ones).
func upperASCII(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'a' && c <= 'z' {
			b[i] = c - 'a' + 'A'
		}
	}
	return string(b)
}

// variant rewrites a name the way the grammar says must not matter: case, and _
// written as - or . (alternating).
func variant(s string) string {
	b := []byte(upperASCII(s))
	n := 0
	for i, c := range b {
		if c == '_' || c == '-' || c == '.' {
			b[i] = "-._"[n%3]
			n++
		}
	}
	return string(b)
}

// namePart splits a rule into its name and its argument list (which is
// case-sensitive and must not be rewritten).
func namePart(rule string) (name, args string) {
	if i := strings.IndexByte(rule, '('); i >= 0 {
		return rule[:i], rule[i:]
	}
	return rule, ""
}

func FuzzParseRule(f *testing.F) {
	for _, s := range []string{
		"mcp__github", "mcp__github__*", "mcp__github__merge_pull_request", "mcp__*", "mcp__git*",
		"mcp__github__get_*", "*", "Bash", "mcp__a__b__*", "mcp__a_", "mcp__a__b__c", `mcp__fs__write_file(path:"/tmp/**")`,
		`mcp__github__merge_pull_request(repo:"myorg/*", branch:"main")`, `mcp__x("a b":"c\"d")`,
		`mcp__fs(path:/tmp)`, `mcp__fs(`, `mcp__fs()`, "MCP--My.Server", "mcp__", "",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		p, err := ParseRule(text)
		if err != nil && p.Never() == "" {
			t.Fatalf("ParseRule(%q) failed (%v) but its pattern may match", text, err)
		}
		if p.Text() != text {
			t.Fatalf("Text() = %q, want %q", p.Text(), text)
		}
		if err == nil && grammarNever(text) && p.Never() == "" {
			t.Fatalf("ParseRule(%q): the grammar says it matches nothing, but Never() is empty", text)
		}
		r := NewRule(Allow, text, userSrc)
		if (r.Problem() == "") != (err == nil && p.Never() == "" && !p.AllTools()) {
			t.Fatalf("Problem() = %q for %q (err %v, never %q)", r.Problem(), text, err, p.Never())
		}
	})
}

func FuzzMatch(f *testing.F) {
	f.Add("mcp__github", "github", "merge_pull_request", "repo", "myorg/api")
	f.Add("mcp__git*", "github", "merge", "", "")
	f.Add("mcp__github__get_*", "github", "get_issue", "", "")
	f.Add("*", "github", "x", "", "")
	f.Add("mcp__*", "s", "t", "", "")
	f.Add(`mcp__my-server__do.thing(path:"/tmp/**")`, "My_Server", "do-thing", "path", "/tmp/a/b")
	f.Add(`mcp__gh__merge(repo:"myorg/*")`, "gh", "merge", "repo", "myorg/../evil/x")
	f.Add(`MCP__A__B`, "a__b", "c", "", "")
	// Issue 22: one joined name, two (server, tool) pairs.
	f.Add("mcp__a__b__c", "a__b", "c", "", "")
	f.Add("mcp__a__b__c", "a", "b__c", "", "")
	f.Add("mcp__a___c", "a_", "c", "", "")
	f.Fuzz(func(t *testing.T, rule, server, tool, key, val string) {
		req := Request{Tool: "mcp__" + server + "__" + tool, Server: server, ToolName: tool}
		if key != "" {
			req.Args = map[string]any{key: val}
		}
		p, err := ParseRule(rule)
		got := p.Match(req)
		if got && (err != nil || p.Never() != "") {
			t.Fatalf("%q matched %+v although it never matches (%v, %q)", rule, req, err, p.Never())
		}
		if got && grammarNever(rule) {
			t.Fatalf("%q matched %+v although the grammar says it matches nothing", rule, req)
		}
		// A rule names one (server, tool) pair: only mcp__* matches a
		// server whose name a host refuses, and a rule never matches two
		// servers whose joined names are equal.
		if got && !p.AllTools() && ServerNameProblem(server) != "" {
			t.Fatalf("%q matched server %q, whose name no rule can name", rule, server)
		}
		for _, list := range []Action{Allow, Ask, Deny} {
			if NewRule(list, rule, userSrc).Matches(req) && !got && !strings.Contains(val, "/") {
				t.Fatalf("Rule.Matches(%q) but Pattern.Match did not, for a value with no path to clean", rule)
			}
		}

		// Case and -/./_ must not matter, in the rule or in the names.
		name, args := namePart(rule)
		vp, _ := ParseRule(variant(name) + args)
		vreq := req
		vreq.Server, vreq.ToolName = variant(server), variant(tool)
		vreq.Tool = "mcp__" + vreq.Server + "__" + vreq.ToolName
		if vp.Match(req) != got || p.Match(vreq) != got || vp.Match(vreq) != got {
			t.Fatalf("folding changed the result for %q on %+v: %v; variant rule %q → %v, variant request %+v → %v",
				rule, req, got, variant(name)+args, vp.Match(req), vreq, p.Match(vreq))
		}

		d := New(NewRule(Allow, rule, userSrc)).Decide(req)
		for _, list := range []Action{Allow, Ask, Deny} {
			checkReference(t, New(NewRule(list, rule, userSrc), NewRule(Allow, "mcp__"+server, projectSrc)), req)
			checkReference(t, New(NewRule(list, rule, userSrc)), vreq)
		}
		checkReference(t, New(NewRule(Allow, rule, userSrc), NewRule(Ask, rule, projectSrc), NewRule(Deny, variant(name)+args, managedSrc)), req)
		if d.Action == Deny || (d.Action == Allow && (grammarNever(rule) || p.AllTools())) {
			t.Fatalf("allow %q decided %+v", rule, d)
		}
	})
}
