package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// TestMCPListProfiles: mcp list shows which profiles include each server,
// in its table (a column only when there are profiles) and in --json.
func TestMCPListProfiles(t *testing.T) {
	w := newRTWorld(t)
	w.userServers(map[string]any{"demo": w.server("demo"), "docs-a": w.server("demo")})
	out, _, _ := w.run(false, "mcp", "list")
	if strings.Contains(out, "review") {
		t.Fatalf("no profiles yet:\n%s", out)
	}
	w.writeJSON(filepath.Join(w.sb, "settings.json"), map[string]any{"profiles": map[string]any{
		"review": map[string]any{"servers": []string{"docs-*"}},
		"all":    map[string]any{},
	}})
	out, _, code := w.run(false, "mcp", "list", "--json")
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	var list []struct {
		Name     string   `json:"name"`
		Profiles []string `json:"profiles"`
	}
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatal(err)
	}
	got := map[string][]string{}
	for _, s := range list {
		got[s.Name] = s.Profiles
	}
	if !slices.Equal(got["demo"], []string{"all"}) || !slices.Equal(got["docs-a"], []string{"all", "review"}) {
		t.Errorf("profiles = %v", got)
	}
	out, _, _ = w.run(true, "mcp", "list")
	if !strings.Contains(out, "PROFILES") && !strings.Contains(out, "profiles") || !strings.Contains(out, "all,review") {
		t.Errorf("the table lacks the profiles column:\n%s", out)
	}
	// Piped, the header names the columns a script cuts: every one of
	// them is in the help's list of the piped columns.
	out, _, _ = w.run(false, "mcp", "list")
	header, _, _ := strings.Cut(out, "\n")
	help := NewMCPListCmd(NewFactory(), nil).Long
	for _, col := range strings.Split(header, "\t") {
		if !strings.Contains(help, col) {
			t.Errorf("mcp list --help does not name the piped column %s (header %q)", col, header)
		}
	}
}

// TestProfileFlag (issue 34.2): --profile NAME on any command shows only
// that profile's servers and tools (status, tools), refuses a call of a
// server it leaves out, and an unknown name is a usage error listing the
// valid ones. Without --profile, status and tools --json say which
// profiles include each server and show each tool.
func TestProfileFlag(t *testing.T) {
	w := newRTWorld(t)
	w.userServers(map[string]any{"demo": w.server("demo"), "docs-a": w.server("demo")})
	w.writeJSON(filepath.Join(w.sb, "settings.json"), map[string]any{
		"permissions": map[string]any{"allow": []string{"mcp__demo__echo", "mcp__docs-a__echo"}},
		"profiles": map[string]any{
			"review": map[string]any{"servers": []string{"docs-*"}, "disabledTools": []string{"add"}},
			"all":    map[string]any{},
			// Defined, but not usable: asked for, its problem is named.
			"broken": map[string]any{"defer": []string{"*"}},
		}})

	for _, args := range [][]string{{"status"}, {"mcp", "list"}, {"tools"}} {
		_, errOut, code := w.run(false, append(args, "--profile", "reveiw")...)
		if code != 2 || !strings.Contains(errOut, `unknown profile "reveiw"`) || !strings.Contains(errOut, "all, review") {
			t.Errorf("%v --profile reveiw: exit %d, want 2 listing the profiles:\n%s", args, code, errOut)
		}
		_, errOut, code = w.run(false, append(args, "--profile", "broken")...)
		if code != 2 || !strings.Contains(errOut, `profile "broken" was dropped: `+filepath.Join(w.sb, "settings.json")+":") || !strings.Contains(errOut, `"profiles.broken.defer": "*": not an MCP tool pattern`) {
			t.Errorf("%v --profile broken: exit %d, want 2 naming its problem:\n%s", args, code, errOut)
		}
	}

	// The servers the profile leaves out are listed, disabled.
	var list []struct {
		Name, Availability, DisabledReason string
	}
	out, _, code := w.run(false, "mcp", "list", "--json", "--profile", "review")
	if err := json.Unmarshal([]byte(out), &list); err != nil || code != 0 || len(list) != 2 ||
		list[0].Name != "demo" || list[0].Availability != "disabled" || list[0].DisabledReason != `not in profile "review"` ||
		list[1].Name != "docs-a" || list[1].Availability != "available" {
		t.Errorf("mcp list --profile review: exit %d, %v, want demo disabled, not in profile, and docs-a:\n%s", code, err, out)
	}

	type server struct {
		Name     string   `json:"name"`
		State    string   `json:"state"`
		Reason   string   `json:"error"`
		Profiles []string `json:"profiles"`
	}
	var st struct{ Servers []server }
	out, errOut, code := w.run(false, "status", "--json", "--profile", "review")
	if err := json.Unmarshal([]byte(out), &st); err != nil || code != 0 {
		t.Fatalf("status --profile review: exit %d, %v:\n%s%s", code, err, out, errOut)
	}
	if len(st.Servers) != 2 || st.Servers[0].Name != "demo" || st.Servers[0].State != "disabled" || st.Servers[0].Reason != `not in profile "review"` ||
		st.Servers[1].Name != "docs-a" || st.Servers[1].State != "connected" || !slices.Equal(st.Servers[1].Profiles, []string{"all", "review"}) {
		t.Errorf("status --profile review = %+v, want demo disabled, not in profile, and docs-a connected, in all and review", st.Servers)
	}

	var tools []struct {
		Name     string   `json:"name"`
		Profiles []string `json:"profiles"`
	}
	out, errOut, code = w.run(false, "tools", "--json", "--profile", "review")
	if err := json.Unmarshal([]byte(out), &tools); err != nil || code != 0 {
		t.Fatalf("tools --profile review: exit %d, %v:\n%s%s", code, err, out, errOut)
	}
	for _, tl := range tools {
		if !strings.HasPrefix(tl.Name, "mcp__docs-a__") || tl.Name == "mcp__docs-a__add" {
			t.Errorf("tools --profile review lists %s", tl.Name)
		}
	}
	if len(tools) == 0 {
		t.Error("tools --profile review lists nothing")
	}

	out, _, code = w.run(false, "tools", "--json")
	if err := json.Unmarshal([]byte(out), &tools); err != nil || code != 0 {
		t.Fatalf("tools --json: exit %d, %v:\n%s", code, err, out)
	}
	shows := map[string][]string{}
	for _, tl := range tools {
		shows[tl.Name] = tl.Profiles
	}
	if !slices.Equal(shows["mcp__docs-a__add"], []string{"all"}) || !slices.Equal(shows["mcp__docs-a__echo"], []string{"all", "review"}) ||
		!slices.Equal(shows["mcp__demo__echo"], []string{"all"}) {
		t.Errorf("tools --json profiles = %v", shows)
	}

	// On a terminal, under the table: how many tools each profile shows.
	if out, _, _ := w.run(true, "tools"); !strings.Contains(out, "Profiles (tools shown): all 8, review 3") {
		t.Errorf("tools on a terminal lacks the profiles line:\n%s", out)
	}

	if _, errOut, code := w.run(false, "call", "--profile", "review", "mcp__demo__echo", `{"text":"hi"}`); code != 3 || !strings.Contains(errOut, `server "demo" is configured but not in profile "review"`) {
		t.Errorf("call of a server the profile leaves out: exit %d, want 3 saying it is not in the profile:\n%s", code, errOut)
	}
	if out, errOut, code := w.run(false, "call", "--profile", "review", "mcp__docs-a__echo", `{"text":"hi"}`); code != 0 || !strings.Contains(out, "hi") {
		t.Errorf("call in the profile: exit %d:\n%s%s", code, out, errOut)
	}
	// A tool the profile's filter hides: the hint points at the profile,
	// not at `mcp tools enable`, which edits the server's own filter and
	// would not show it.
	_, errOut, code = w.run(false, "call", "--profile", "review", "mcp__docs-a__add", `{"a":1,"b":2}`)
	if code != 3 || !strings.Contains(errOut, `in profile "review" (`+filepath.Join(w.sb, "settings.json")+":") ||
		!strings.Contains(errOut, "hint: to use it, take it out of that profile's filter") || strings.Contains(errOut, "mcp tools enable") {
		t.Errorf("call of a tool the profile hides: exit %d, want 3 and a hint naming the profile's filter:\n%s", code, errOut)
	}
}

// TestProfileRefusedWhereItChangesNothing: --profile is never silently
// ignored. A command that edits what every profile shares (mcp add,
// enable, remove, permissions allow…) or keeps a login refuses it, exit 2,
// naming where the profile itself is defined, and writes nothing; mcp get
// shows the server as the profile sees it, as mcp list does.
func TestProfileRefusedWhereItChangesNothing(t *testing.T) {
	w := newMgmtWorld(t)
	settings := filepath.Join(w.env["SWITCHBOARD_HOME"], "settings.json")
	w.write(settings, `{"profiles": {"review": {"servers": ["alpha"]}}}`)
	for _, name := range []string{"alpha", "beta"} {
		if _, stderr, code := w.run(false, "mcp", "add", "--scope", "user", name, "--", "x"); code != 0 {
			t.Fatalf("mcp add %s: exit %d: %s", name, code, stderr)
		}
	}
	mcpJSON := filepath.Join(w.env["SWITCHBOARD_HOME"], "mcp.json")
	before, err := os.ReadFile(mcpJSON)
	if err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"mcp", "add", "--scope", "user", "gamma", "--", "x"},
		{"mcp", "remove", "beta"},
		{"mcp", "enable", "beta"},
		{"mcp", "disable", "alpha"},
		{"mcp", "tools", "disable", "alpha", "t"},
		{"permissions", "deny", "mcp__alpha", "--force"},
		{"mcp", "login", "alpha"},
	} {
		_, stderr, code := w.run(false, append([]string{"--profile", "review"}, args...)...)
		if code != ExitUsage || !strings.Contains(stderr, "error: --profile does not apply to `switchboard "+args[0]) ||
			!strings.Contains(stderr, `hint: run it without --profile; profile "review" itself is edited where it is defined, at ~/.switchboard/settings.json:1:15`) {
			t.Errorf("%q --profile review: exit %d, stderr %q; want 2, the refusal and where the profile is", args, code, stderr)
		}
	}
	if after, _ := os.ReadFile(mcpJSON); string(after) != string(before) {
		t.Errorf("a refused command wrote mcp.json:\n%s\nwas:\n%s", after, before)
	}
	if got, _ := os.ReadFile(settings); string(got) != `{"profiles": {"review": {"servers": ["alpha"]}}}` {
		t.Errorf("a refused command wrote settings.json: %s", got)
	}

	// mcp get reads as the profile sees: beta is left out, alpha is not.
	out, stderr, code := w.run(false, "mcp", "get", "beta", "--profile", "review")
	if code != 0 || !strings.Contains(out, "enabled\tno (not in profile \"review\")") {
		t.Errorf("mcp get beta --profile review: exit %d\n%s%s", code, out, stderr)
	}
	out, stderr, code = w.run(false, "mcp", "get", "alpha", "--profile", "review")
	if code != 0 || !strings.Contains(out, "enabled\tyes\n") {
		t.Errorf("mcp get alpha --profile review: exit %d\n%s%s", code, out, stderr)
	}

	// Every command either applies --profile, is one nobody expects it to
	// change, or refuses it: none is left to ignore it silently.
	f, _, _ := w.factory(false)
	root := NewRootCmd(f)
	seen := map[string]bool{}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			walk(sub)
		}
		path := c.CommandPath()
		seen[path] = true
		if !c.Runnable() || c.Hidden || profileCommands[path] || profileNeutral[path] {
			return
		}
		f.Global.Profile = "review"
		err := f.refuseProfile(c)
		if exitCode(err) != ExitUsage || !strings.Contains(fmt.Sprint(err), "--profile does not apply to `"+path+"`") {
			t.Errorf("%s --profile review: %v; want it refused", path, err)
		}
	}
	walk(root)
	for _, m := range []map[string]bool{profileCommands, profileNeutral} {
		for path := range m {
			if !seen[path] && path != "switchboard help" { // cobra adds help when it runs
				t.Errorf("%q: no such command; the list of commands --profile applies to is out of date", path)
			}
		}
	}
}
