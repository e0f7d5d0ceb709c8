package toolsurface_test

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-mcp/switchboard/toolsurface"
)

var servedNameRE = regexp.MustCompile(`^[a-zA-Z0-9_-]+$`)

func TestDefaultNameBudget(t *testing.T) {
	if got, want := toolsurface.DefaultNameBudget, 64-len("mcp__switchboard__"); got != want {
		t.Errorf("DefaultNameBudget = %d, want %d", got, want)
	}
	for entry, want := range map[string]int{"switchboard": 46, "sb": 64 - len("mcp__sb__"), "my gw": 64 - len("mcp__my_gw__")} {
		if got := toolsurface.NameBudget(entry); got != want {
			t.Errorf("NameBudget(%q) = %d, want %d", entry, got, want)
		}
	}
}

func TestServedName(t *testing.T) {
	long := "trigger-long-running-operation"
	for _, tc := range []struct {
		server, tool string
		budget       int
		want         string
	}{
		{"github", "create_issue", 46, "github__create_issue"},
		{"my.server", "do it", 46, "my_server__do_it"},
		// The name of issue 16: 65 characters behind Claude Code's prefix
		// as mcp__everything__…; 41 served, 59 with the prefix.
		{"everything", long, 46, "everything__trigger-long-running-operation"},
	} {
		if got := toolsurface.ServedName(tc.server, tc.tool, tc.budget); got != tc.want {
			t.Errorf("ServedName(%q, %q, %d) = %q, want %q", tc.server, tc.tool, tc.budget, got, tc.want)
		}
	}
	// Cut: the front, '_', the hash of the raw parts — the same hash
	// ToolName ends a cut name with.
	tool := strings.Repeat("x", 80)
	got := toolsurface.ServedName("fs", tool, 46)
	full := toolsurface.ToolName("fs", tool)
	if len(got) != 46 || !strings.HasPrefix(got, "fs__xxxx") || got[37] != '_' || got[38:] != full[len(full)-8:] {
		t.Errorf("cut name %q (ToolName %q)", got, full)
	}
}

// TestServedNameProperties: for every budget from the smallest accepted to
// 64, over names of every length, every served name fits the budget and the
// legal alphabet, is stable, and distinct tools get distinct names.
func TestServedNameProperties(t *testing.T) {
	var pairs [][2]string
	for _, server := range []string{"a", "fs", "everything", strings.Repeat("s", 40), "dotted.name-1", strings.Repeat("long-server", 5)} {
		for n := 1; n <= 90; n += 7 {
			base := strings.Repeat("t", n)
			// Tools sharing a long front, and two that sanitize alike
			// only in part.
			pairs = append(pairs, [2]string{server, base}, [2]string{server, base + "_a"}, [2]string{server, base + "_b"}, [2]string{server, base + ".é"})
		}
	}
	for budget := toolsurface.MinNameBudget; budget <= toolsurface.MaxNameLen; budget++ {
		seen := map[string][2]string{}
		for _, p := range pairs {
			name := toolsurface.ServedName(p[0], p[1], budget)
			if len(name) > budget || !servedNameRE.MatchString(name) {
				t.Fatalf("budget %d: ServedName(%q, %q) = %q (%d bytes)", budget, p[0], p[1], name, len(name))
			}
			if again := toolsurface.ServedName(p[0], p[1], budget); again != name {
				t.Fatalf("not deterministic: %q then %q", name, again)
			}
			if prev, dup := seen[name]; dup && prev != p {
				t.Fatalf("budget %d: %v and %v both served as %q", budget, prev, p, name)
			}
			seen[name] = p
		}
	}
	// With Claude Code's prefix for the entry, the whole name is ≤ 64.
	for _, entry := range []string{"switchboard", "sb", "gw-prod"} {
		b := toolsurface.NameBudget(entry)
		for _, p := range pairs {
			if n := toolsurface.ClientPrefix(entry) + toolsurface.ServedName(p[0], p[1], b); len(n) > 64 {
				t.Errorf("entry %s: %q is %d characters", entry, n, len(n))
			}
		}
	}
	// A budget out of range is clamped, never a panic or an over-long name.
	if n := toolsurface.ServedName("s", strings.Repeat("t", 100), 3); len(n) != toolsurface.MinNameBudget {
		t.Errorf("budget 3 gave %q", n)
	}
	if n := toolsurface.ServedName("s", strings.Repeat("t", 100), 500); len(n) != 64 {
		t.Errorf("budget 500 gave %q", n)
	}
}

func TestServedRoutes(t *testing.T) {
	tools := []toolsurface.ServedTool{
		{Server: "alpha", Tool: "echo"},
		{Server: "alpha", Tool: "echo"}, // listed twice: one claimant
		{Server: "beta", Tool: "x.y"},
		{Server: "beta", Tool: "x_y"}, // the host refuses this; the gateway must not guess
		{Server: "switchboard", Tool: "pause"},
		{Name: "tool_search"},
	}
	routes, clashes := toolsurface.ServedRoutes(tools, 46, []string{"switchboard__pause"})
	if diff := cmp.Diff(map[string]int{"alpha__echo": 0, "tool_search": 5}, routes); diff != "" {
		t.Errorf("routes (-want +got):\n%s", diff)
	}
	var got []string
	for _, c := range clashes {
		if !errors.Is(c, toolsurface.ErrCollision) {
			t.Errorf("%v does not wrap ErrCollision", c)
		}
		got = append(got, c.Error())
	}
	want := []string{
		`tool name collision: server "beta": tools "x.y" and "x_y" both become "beta__x_y"`,
		`tool name collision: tool "pause" of server "switchboard" would shadow built-in tool "switchboard__pause"`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("clashes (-want +got):\n%s", diff)
	}
	// Cut names that collide are refused too, deterministically: whatever
	// the order, neither is served.
	for _, order := range [][2]int{{0, 1}, {1, 0}} {
		a := toolsurface.ServedName("s", strings.Repeat("t", 100), 20)
		pair := []toolsurface.ServedTool{{Server: "s", Tool: strings.Repeat("t", 100)}, {Server: "x", Tool: "y", Name: a}}
		in := []toolsurface.ServedTool{pair[order[0]], pair[order[1]]}
		routes, clashes := toolsurface.ServedRoutes(in, 20, nil)
		if len(routes) != 0 || len(clashes) != 1 {
			t.Errorf("order %v: routes %v, clashes %v", order, routes, fmt.Sprint(clashes))
		}
	}
}
