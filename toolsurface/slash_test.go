package toolsurface

import (
	"regexp"
	"strings"
	"testing"
)

var slashForm = regexp.MustCompile(`^/[A-Za-z0-9_.-]+:[A-Za-z0-9_.-]+$`)

func TestSlashCommand(t *testing.T) {
	for _, c := range []struct{ server, prompt, want string }{
		{"github", "review_pr", "/github:review_pr"},
		{"my.docs", "summarize-file", "/my.docs:summarize-file"},
		{"srv", "two words", "/srv:two_words"},
		{"srv", "a:b/c", "/srv:a_b_c"},
		{"srv", "", "/srv:_"},
		{"srv", "日本", "/srv:__"},
	} {
		if got := SlashCommand(c.server, c.prompt); got != c.want {
			t.Errorf("SlashCommand(%q, %q) = %q, want %q", c.server, c.prompt, got, c.want)
		}
	}
	for in, want := range map[string][2]string{
		"/github:review_pr": {"github", "review_pr"},
		"github:review_pr":  {"github", "review_pr"},
		" /s:a:b ":          {"s", "a:b"},
	} {
		s, p, err := ParseSlashCommand(in)
		if err != nil || s != want[0] || p != want[1] {
			t.Errorf("ParseSlashCommand(%q) = %q, %q, %v", in, s, p, err)
		}
	}
	for _, in := range []string{"", "/", "/github", "/github:", "/:x"} {
		if _, _, err := ParseSlashCommand(in); err == nil || strings.Contains(err.Error(), "\n") {
			t.Errorf("ParseSlashCommand(%q) error = %v, want one line", in, err)
		}
	}
}

func TestSlashCommandsCollisions(t *testing.T) {
	refs := []PromptRef{{"s", "a b"}, {"s", "a_b"}, {"s", "a/b"}, {"s", "plain"}, {"t", "a_b"}, {"s", "a_b"}}
	c := NewSlashCommands(refs)
	got := map[PromptRef]string{}
	seen := map[string]PromptRef{}
	for _, r := range refs {
		cmd, ok := c.Command(r.Server, r.Prompt)
		if !ok || !slashForm.MatchString(cmd) {
			t.Fatalf("Command(%+v) = %q, %v", r, cmd, ok)
		}
		if prev, dup := seen[cmd]; dup && prev != r {
			t.Fatalf("%+v and %+v share %s", prev, r, cmd)
		}
		seen[cmd] = r
		got[r] = cmd
		if back, ok := c.Resolve(cmd); !ok || back != r {
			t.Errorf("Resolve(%s) = %+v, %v; want %+v", cmd, back, ok, r)
		}
	}
	if got[PromptRef{"s", "a_b"}] != "/s:a_b" || got[PromptRef{"s", "plain"}] != "/s:plain" || got[PromptRef{"t", "a_b"}] != "/t:a_b" {
		t.Errorf("clean names lost their plain command: %v", got)
	}
	if !strings.HasPrefix(got[PromptRef{"s", "a b"}], "/s:a_b-") {
		t.Errorf("colliding name got %s", got[PromptRef{"s", "a b"}])
	}
	// Order does not matter.
	rev := append([]PromptRef(nil), refs...)
	for i, j := 0, len(rev)-1; i < j; i, j = i+1, j-1 {
		rev[i], rev[j] = rev[j], rev[i]
	}
	c2 := NewSlashCommands(rev)
	for r, cmd := range got {
		if cmd2, _ := c2.Command(r.Server, r.Prompt); cmd2 != cmd {
			t.Errorf("%+v: %s in one order, %s in the other", r, cmd, cmd2)
		}
	}
	// The raw spelling resolves too.
	if r, ok := c.Resolve("/s:a b"); !ok || r != (PromptRef{"s", "a b"}) {
		t.Errorf("Resolve(raw) = %+v, %v", r, ok)
	}
	if _, ok := c.Resolve("/s:nope"); ok {
		t.Error("an unknown command resolved")
	}
}

func TestParseResourceRef(t *testing.T) {
	for in, want := range map[string][2]string{
		"@demo:demo://readme":         {"demo", "demo://readme"},
		"fs:file:///tmp/a.txt":        {"fs", "file:///tmp/a.txt"},
		" @my.docs:urn:x:y ":          {"my.docs", "urn:x:y"},
		"@everything:test://static/1": {"everything", "test://static/1"},
	} {
		s, u, err := ParseResourceRef(in)
		if err != nil || s != want[0] || u != want[1] {
			t.Errorf("ParseResourceRef(%q) = %q, %q, %v", in, s, u, err)
		}
	}
	for in, want := range map[string]string{
		"":                "write @<server>:<uri>",
		"@demo":           "write @<server>:<uri>",
		"@:x://y":         "write @<server>:<uri>",
		"@demo:":          "write @<server>:<uri>",
		"@de mo:x://y":    "is not a server name",
		"@demo:x:// y":    "space or control",
		"@demo:x://\x00y": "space or control",
	} {
		_, _, err := ParseResourceRef(in)
		if err == nil || !strings.Contains(err.Error(), want) || strings.ContainsAny(err.Error(), "\n") {
			t.Errorf("ParseResourceRef(%q) = %v, want one line with %q", in, err, want)
		}
	}
}

// FuzzSlashCommand: commands are always one legal word of the form
// /server:prompt, parse back to their sanitized parts, and a set of
// prompts never shares a command.
func FuzzSlashCommand(f *testing.F) {
	f.Add("github", "review pr", "review_pr")
	f.Add("", ":", "/")
	f.Add("日本", "\x00", "_")
	f.Fuzz(func(t *testing.T, server, a, b string) {
		cmd := SlashCommand(server, a)
		if !slashForm.MatchString(cmd) {
			t.Fatalf("SlashCommand(%q, %q) = %q", server, a, cmd)
		}
		s, p, err := ParseSlashCommand(cmd)
		if err != nil || s != slashPart(server) || p != slashPart(a) {
			t.Fatalf("ParseSlashCommand(%q) = %q, %q, %v", cmd, s, p, err)
		}
		refs := []PromptRef{{server, a}, {server, b}, {server + "x", a}}
		c := NewSlashCommands(refs)
		seen := map[string]PromptRef{}
		for _, r := range refs {
			cmd, ok := c.Command(r.Server, r.Prompt)
			if !ok {
				t.Fatalf("no command for %+v", r)
			}
			if prev, dup := seen[cmd]; dup && prev != r {
				t.Fatalf("%+v and %+v share %s", prev, r, cmd)
			}
			seen[cmd] = r
			if back, ok := c.Resolve(cmd); !ok || back != r {
				t.Fatalf("Resolve(%s) = %+v, want %+v", cmd, back, r)
			}
		}
	})
}

// FuzzParseResourceRef: no input panics; errors are one line; an accepted
// reference renders (ResourceRef) to one that parses to the same parts.
func FuzzParseResourceRef(f *testing.F) {
	for _, s := range []string{"@demo:demo://readme", "fs:file:///a b", "@:x", "@a.b-c_d:urn:1", "@x:\x7f"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		server, uri, err := ParseResourceRef(s)
		if err != nil {
			if strings.ContainsAny(err.Error(), "\n\r") {
				t.Fatalf("error has more than one line: %q", err)
			}
			return
		}
		s2, u2, err := ParseResourceRef(ResourceRef(server, uri))
		if err != nil || s2 != server || u2 != uri {
			t.Fatalf("%q → (%q, %q) → %q → (%q, %q, %v)", s, server, uri, ResourceRef(server, uri), s2, u2, err)
		}
	})
}
