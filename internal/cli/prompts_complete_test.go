package cli

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/switchboard-mcp/switchboard/internal/npmtest"
)

// everythingWorld is a world with the npm reference server-everything,
// whose completable-prompt completes its arguments (completion/complete).
func everythingWorld(t *testing.T) *rtWorld {
	p := npmtest.Install(t)
	w := newRTWorld(t)
	w.userServers(map[string]any{
		"everything": map[string]any{"command": p.Node, "args": []string{p.Everything}},
		"echo":       w.server("echo"),
	})
	return w
}

func TestPromptCompletion(t *testing.T) {
	t.Parallel() // waits on timeouts and processes: runs beside the others
	w := everythingWorld(t)
	complete := func(args ...string) []string {
		t.Helper()
		out, stderr, code := w.run(false, append([]string{"__complete"}, args...)...)
		if code != 0 {
			t.Fatalf("__complete %v: exit %d; stderr:\n%s", args, code, stderr)
		}
		var lines []string
		for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
			if !strings.HasPrefix(l, ":") { // the directive line
				v, _, _ := strings.Cut(l, "\t")
				lines = append(lines, v)
			}
		}
		return lines
	}
	t.Run("prompt names", func(t *testing.T) {
		got := complete("prompt", "/every")
		if !slices.Contains(got, "/everything:completable-prompt") || slices.Contains(got, "/echo:greet") {
			t.Errorf("completions %v", got)
		}
	})
	t.Run("argument names, then values from the server", func(t *testing.T) {
		got := complete("prompt", "/everything:completable-prompt", "--arg", "")
		if strings.Join(got, " ") != "department= name=" {
			t.Errorf("argument names %v", got)
		}
		got = complete("prompt", "/everything:completable-prompt", "--arg", "department=S")
		if strings.Join(got, " ") != "department=Sales department=Support" {
			t.Errorf("department values %v", got)
		}
		// The name depends on the department already given.
		got = complete("prompt", "/everything:completable-prompt", "--arg", "department=Sales", "--arg", "name=")
		if strings.Join(got, " ") != "name=David name=Eve name=Frank" {
			t.Errorf("name values %v", got)
		}
		got = complete("prompt", "/everything:completable-prompt", "--arg", "department=Sales", "--arg", "")
		if strings.Join(got, " ") != "name=" {
			t.Errorf("remaining argument names %v", got)
		}
	})
	t.Run("a server without completions offers nothing", func(t *testing.T) {
		if got := complete("prompt", "/echo:greet", "--arg", "name="); len(got) != 0 {
			t.Errorf("echo completions %v", got)
		}
	})
	t.Run("a terminal shows the suggestions", func(t *testing.T) {
		f, in, out, errOut := w.factory(true)
		f.IO.CanPrompt = true
		in.WriteString("Eng?\nEngineering\nBob\n")
		if code := Run(context.Background(), f, []string{"prompt", "/everything:completable-prompt"}); code != 0 {
			t.Fatalf("exit %d; stderr:\n%s", code, errOut)
		}
		for _, want := range []string{
			"suggestions: Engineering, Sales, Marketing, Support",
			"  suggestions: Engineering\n",     // the answer "Eng?" asks for more
			"suggestions: Alice, Bob, Charlie", // names of the department chosen
		} {
			if !strings.Contains(errOut.String(), want) {
				t.Errorf("stderr lacks %q:\n%s", want, errOut)
			}
		}
		if !strings.Contains(out.String(), "Please promote Bob to the head of the Engineering team.") {
			t.Errorf("stdout = %q", out)
		}
	})
}
