package policy

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestParsedPairMatching is issue 22's hole 4 at the rule level: server a
// with tool b__c and server a__b with tool c are both shown as
// mcp__a__b__c. A rule names a (server, tool) pair — the server ends at the
// first "__" — so the user's rule for a's b__c never covers a__b's c,
// whichever list it is in and however the names are spelled.
func TestParsedPairMatching(t *testing.T) {
	userTool := call("a", "b__c") // what the user meant
	repoTool := call("a__b", "c") // what a repository could add
	for _, tc := range []struct {
		name string
		rule string
		req  Request
		want bool
	}{
		{"the user's own tool", "mcp__a__b__c", userTool, true},
		{"the same joined name on another server", "mcp__a__b__c", repoTool, false},
		{"spelled with - and . and capitals", "MCP__A-.B__c", repoTool, false},
		{"whole server a is not server a__b", "mcp__a", repoTool, false},
		{"mcp__a__b is tool b of a", "mcp__a__b", call("a", "b"), true},
		{"mcp__a__b is not server a__b", "mcp__a__b", repoTool, false},
		{"mcp__a__b__* names no server", "mcp__a__b__*", repoTool, false},
		{"the request's Tool alone splits the same way", "mcp__a__b__c", Request{Tool: "mcp__a__b__c"}, true},
		{"server a_ and tool _c of a: a rule names a", "mcp__a___c", call("a", "_c"), true},
		{"server a_ is never named", "mcp__a___c", call("a_", "c"), false},
		{"a folded twin is the same server", "mcp__my_srv__x", call("my-srv", "x"), true},
		{"mcp__* still covers every server (deny, ask)", "mcp__*", repoTool, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := ParseRule(tc.rule)
			if err != nil {
				t.Fatal(err)
			}
			if got := p.Match(tc.req); got != tc.want {
				t.Errorf("ParseRule(%q).Match(%+v) = %v, want %v", tc.rule, tc.req, got, tc.want)
			}
		})
	}
	// The joined string never decides: an allow of the user's tool asks for
	// the repository's, and a deny of the repository's leaves the user's.
	if d := New(allow("mcp__a__b__c")...).Decide(repoTool); d.Action != Ask {
		t.Errorf("allow mcp__a__b__c decided %s for server a__b's tool c, want ask", d.Action)
	}
	if d := New(join(allow("mcp__a"), deny("mcp__a__b"))...).Decide(userTool); d.Action != Allow {
		t.Errorf("deny mcp__a__b (tool b of a) decided %s for a's b__c, want the allow of mcp__a", d.Action)
	}
	for _, rule := range []string{"mcp__a__b__*", "mcp__a_", "mcp__x-__*"} {
		if p, _ := ParseRule(rule); p.Never() == "" {
			t.Errorf("%s can name only a server the host refuses, but Never() is empty", rule)
		}
	}
}

func TestServerNameProblem(t *testing.T) {
	for name, bad := range map[string]bool{
		"a": false, "github": false, "my-srv": false, "_a": false, "a_b.c-d": false,
		"a__b": true, "a-_b": true, "a.-b": true, "A--B": true, "a_": true, "a-": true, "a.": true, "_": true,
	} {
		if got := ServerNameProblem(name) != ""; got != bad {
			t.Errorf("ServerNameProblem(%q) = %q, want a problem: %v", name, ServerNameProblem(name), bad)
		}
	}
}

// ServerConflicts decides from the set of names alone: every order gives
// the same answer, and every member of a folded group is refused.
func TestServerConflicts(t *testing.T) {
	names := []string{"a", "a__b", "my-srv", "My_Srv", "my.srv", "github", "x_"}
	want := ServerConflicts(names)
	if diff := cmp.Diff([]string{"My_Srv", "a__b", "my-srv", "my.srv", "x_"}, keys(want)); diff != "" {
		t.Errorf("refused servers (-want +got):\n%s", diff)
	}
	if got := want["my-srv"]; got != want["My_Srv"] || got == "" {
		t.Errorf("the members of one group get different reasons: %q and %q", got, want["My_Srv"])
	}
	for i := range names {
		rot := append(append([]string(nil), names[i:]...), names[:i]...)
		if diff := cmp.Diff(want, ServerConflicts(rot)); diff != "" {
			t.Errorf("order %v changed the result (-want +got):\n%s", rot, diff)
		}
	}
	if got := ServerConflicts([]string{"a", "a"}); len(got) != 0 {
		t.Errorf("one name given twice is no conflict: %v", got)
	}
}

func keys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
