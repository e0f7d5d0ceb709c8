package config

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestLoadLastGood: with a LastGood, a file broken after a good load keeps
// its good contents in effect (its error still reported) while the other
// files load as they are now; a file that is gone is forgotten.
func TestLoadLastGood(t *testing.T) {
	f := newFixture(t)
	user := f.write(filepath.Join(f.home, "mcp.json"), servers(cmdDef("a", "user-a"), cmdDef("b", "user-b")))
	managed := filepath.Join(f.etcDir, "managed-mcp.json")
	flag := f.write(filepath.Join(f.dir, "flag.json"), servers(cmdDef("fl", "flag-fl")))
	lg := &LastGood{}
	o := f.opts()
	o.LastGood = lg
	o.MCPConfigs = []string{flag}
	avail := func(r *Resolved) map[string]string {
		out := map[string]string{}
		for _, s := range r.Servers {
			out[s.Name] = string(s.Availability) + " " + s.Written.Command
		}
		return out
	}
	if diff := cmp.Diff(map[string]string{"a": "available user-a", "b": "available user-b", "fl": "available flag-fl"}, avail(f.load(o))); diff != "" {
		t.Fatalf("first load (-want +got):\n%s", diff)
	}

	// Broken mid-edit, while the managed policy tightens and the flag
	// file breaks too.
	f.write(user, `{"mcpServers": {"a": {"command": "user-a"}, "c": `)
	f.write(managed, `{"deniedMcpServers": ["b"]}`)
	f.write(flag, `[`)
	r := f.load(o)
	if diff := cmp.Diff(map[string]string{"a": "available user-a", "b": "disabled user-b", "fl": "available flag-fl"}, avail(r)); diff != "" {
		t.Errorf("broken user and flag files, managed deny (-want +got):\n%s", diff)
	}
	var userErr, userKept, flagKept bool
	for _, d := range r.Diagnostics {
		switch {
		case d.File == user && d.Severity == SeverityError && d.Line == 1 && d.Col > 0 && strings.Contains(d.Message, "invalid JSON"):
			userErr = true
		case d.File == user && d.Severity == SeverityWarning && strings.Contains(d.Message, "last good contents"):
			userKept = true
		case d.File == flag && d.Severity == SeverityWarning && strings.Contains(d.Message, "last good contents"):
			flagKept = true
		}
	}
	if !userErr || !userKept || !flagKept {
		t.Errorf("diagnostics lack the parse error with its position or the last-good warnings (%v %v %v): %v", userErr, userKept, flagKept, r.Diagnostics)
	}

	// Fixed: the new contents apply.
	f.write(user, servers(cmdDef("c", "user-c")))
	f.write(flag, servers(cmdDef("fl", "flag-fl2")))
	if diff := cmp.Diff(map[string]string{"c": "available user-c", "fl": "available flag-fl2"}, avail(f.load(o))); diff != "" {
		t.Errorf("fixed (-want +got):\n%s", diff)
	}

	// Removed, then broken again: nothing of the removed file comes back.
	if err := os.Remove(user); err != nil {
		t.Fatal(err)
	}
	f.load(o)
	f.write(user, `{`)
	if got := avail(f.load(o)); got["c"] != "" {
		t.Errorf("a removed file's servers came back when it reappeared broken: %v", got)
	}

	// Without a LastGood a broken file defines nothing, as before.
	f.write(user, servers(cmdDef("a", "user-a")))
	f.write(user, `{`)
	if got := avail(f.load(f.opts())); got["a"] != "" {
		t.Errorf("without LastGood, a broken file's server is served: %v", got)
	}
}

// A file that reads empty where it last held servers keeps them, and is
// listed as unsettled: `jq … > file` truncates before it writes, and a
// load in between read "no servers" (issue 29, point 17). The reloader
// forgets it once it stays empty, and the empty file applies then; one
// that was empty from the start is simply empty.
func TestLoadLastGoodEmptyIsUnsettled(t *testing.T) {
	f := newFixture(t)
	user := f.write(filepath.Join(f.home, "mcp.json"), servers(cmdDef("a", "user-a")))
	lg := &LastGood{}
	o := f.opts()
	o.LastGood = lg
	names := func(r *Resolved) []string {
		var out []string
		for _, s := range r.Servers {
			out = append(out, s.Name)
		}
		return out
	}
	if got := names(f.load(o)); !cmp.Equal(got, []string{"a"}) {
		t.Fatalf("first load: %v", got)
	}
	for _, blank := range []string{"", "\n  \n"} {
		f.write(user, blank)
		r := f.load(o)
		if got := names(r); !cmp.Equal(got, []string{"a"}) || !cmp.Equal(r.Files.Unsettled, []string{user}) {
			t.Errorf("%q: servers %v, unsettled %v; want a kept and the file unsettled", blank, got, r.Files.Unsettled)
		}
		if !slices.ContainsFunc(r.Diagnostics, func(d Diagnostic) bool {
			return d.File == user && d.Severity == SeverityWarning && strings.Contains(d.Message, "is empty")
		}) {
			t.Errorf("no warning for the empty file: %v", r.Diagnostics)
		}
	}
	// Written after all: its contents apply, and it is settled.
	f.write(user, servers(cmdDef("b", "user-b")))
	if r := f.load(o); !cmp.Equal(names(r), []string{"b"}) || len(r.Files.Unsettled) > 0 {
		t.Errorf("written: %v, unsettled %v", names(r), r.Files.Unsettled)
	}
	// Empty for good: once forgotten, it applies.
	f.write(user, "")
	r := f.load(o)
	lg.Forget(r.Files.Unsettled...)
	if r := f.load(o); len(r.Servers) != 0 || len(r.Files.Unsettled) > 0 {
		t.Errorf("forgotten, the empty file still defines %v (unsettled %v)", names(r), r.Files.Unsettled)
	}
	if r := f.load(o); len(r.Servers) != 0 || len(r.Files.Unsettled) > 0 {
		t.Errorf("an empty file remembered as empty: %v, unsettled %v", names(r), r.Files.Unsettled)
	}
}
