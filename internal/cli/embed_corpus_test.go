package cli

import (
	"encoding/json"
	"github.com/switchboard-mcp/switchboard/host"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// embedBinary builds examples/embed once per test binary: an agent that
// uses the front door (package switchboard) in 40 lines, headless.
var embedBinary = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "switchboard-embed-")
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "embed")
	out, err := exec.Command("go", "build", "-o", bin, "../../examples/embed").CombinedOutput()
	if err != nil {
		return "", &exec.ExitError{Stderr: out}
	}
	return bin, nil
})

// embedRun is one run of the example in the case's world.
type embedRun struct {
	states map[string]string // server → state
	tools  []string          // the tools' names as the provider gets them
	result string            // what the call returned to the model
	err    string            // the error it printed
}

func (c *hostileCase) embed(args ...string) embedRun {
	c.t.Helper()
	bin, err := embedBinary()
	if err != nil {
		c.t.Fatalf("building examples/embed: %v", err)
	}
	cmd := exec.Command(bin, append([]string{c.proj}, args...)...)
	cmd.Dir = c.proj
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + c.home, "SWITCHBOARD_HOME=" + c.sb,
		"SWITCHBOARD_MANAGED_DIR=" + filepath.Join(c.work, "managed"), "MARKER=" + c.marker, "EXE=" + c.exe}
	out, err := cmd.Output()
	if err != nil {
		c.t.Fatalf("examples/embed %v: %v\n%s", args, err, out)
	}
	r := embedRun{states: map[string]string{}}
	text, result, _ := strings.Cut(string(out), "\nresult ")
	r.result = result // the rest: the envelope spans lines
	for _, line := range strings.Split(text, "\n") {
		switch {
		case strings.HasPrefix(line, "server "):
			name, rest, _ := strings.Cut(strings.TrimPrefix(line, "server "), ": ")
			state, _, _ := strings.Cut(rest, " ")
			r.states[name] = state
		case strings.HasPrefix(line, "tool "):
			var def struct{ Name string }
			if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "tool ")), &def); err != nil {
				c.t.Fatalf("a tool line that is not a tool definition: %q", line)
			}
			r.tools = append(r.tools, def.Name)
		case strings.HasPrefix(line, "error: "):
			r.err = strings.TrimPrefix(line, "error: ")
		}
	}
	return r
}

// TestEmbedExampleMatchesCLIOnHostileRepos runs the hostile-repository
// corpus through examples/embed, an embedder's 40 lines on the front door,
// and through the CLI: every server is in the same state in both, no
// repository server is spawned, the repository's own files approve
// nothing, a headless ask is a deny, and the user's own server's tools
// are listed. The last step is the witness: the user's own allow rule
// does let the call run, so the deny is the policy's, not a broken call.
func TestEmbedExampleMatchesCLIOnHostileRepos(t *testing.T) {
	t.Parallel() // waits on processes, mostly: runs beside the others
	entries, err := os.ReadDir(hostileDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		t.Run(e.Name(), func(t *testing.T) {
			c := newHostileCase(t, e.Name())
			if c.want.Settings != "" {
				t.Skip("the case passes --settings, a CLI flag the example does not take (switchboard.CheckSettingsFile has its own test)")
			}
			// The user's own server, beside whatever the case defines.
			userFile := filepath.Join(c.sb, "mcp.json")
			user := map[string]any{"mcpServers": map[string]any{}}
			if b, err := os.ReadFile(userFile); err == nil {
				if err := json.Unmarshal(b, &user); err != nil {
					t.Fatal(err)
				}
			}
			user["mcpServers"].(map[string]any)["own"] = c.server("echo")
			c.writeJSON(userFile, user)
			c.approveFirst()

			got := c.embed("mcp__"+c.want.Server+"__echo", `{"text":"hi"}`)
			c.noMarker("examples/embed")
			out, errOut, code := c.run("status", "--json")
			if code != 0 && code != ExitUsage {
				t.Fatalf("status: exit %d\n%s", code, errOut)
			}
			var st struct {
				Servers []struct{ Name, State string } `json:"servers"`
			}
			if err := json.Unmarshal([]byte(out), &st); err != nil {
				t.Fatalf("status --json: %v\n%s", err, out)
			}
			cli := map[string]string{}
			for _, s := range st.Servers {
				cli[s.Name] = s.State
			}
			if d := cmp.Diff(cli, got.states); d != "" {
				t.Errorf("server states, CLI (-) vs examples/embed (+):\n%s", d)
			}
			if got.states[c.want.Server] != c.want.State {
				t.Errorf("%s is %s in examples/embed, want %s", c.want.Server, got.states[c.want.Server], c.want.State)
			}
			if got.result != "" || got.err == "" {
				t.Errorf("the call of the held server's tool ran: result %q, error %q", got.result, got.err)
			}
			if c.want.gated() && !strings.Contains(got.err, host.State(c.want.State).Phrase()) {
				t.Errorf("the call's error does not say the server is %s: %q", c.want.State, got.err)
			}
			for _, name := range got.tools {
				if strings.HasPrefix(name, "mcp__"+c.want.Server+"__") {
					t.Errorf("the held server's tool %s is listed", name)
				}
			}
			if !slices.Contains(got.tools, "mcp__own__echo") {
				t.Errorf("the user's own server's tool is not listed: %q", got.tools)
			}

			// Headless, nobody can be asked: the user's own tool is denied
			// too, as the CLI's call is (exit 3)...
			own := c.embed("mcp__own__echo", `{"text":"hi"}`)
			if own.result != "" || !strings.Contains(own.err, "no permission rule allows mcp__own__echo") {
				t.Errorf("a headless ask ran or failed otherwise: result %q, error %q", own.result, own.err)
			}
			if _, _, code := c.run("call", "mcp__own__echo", `{"text":"hi"}`); code != ExitRefused {
				t.Errorf("the CLI's call of the user's tool: exit %d, want 3", code)
			}
			// ...until the user's own settings allow it.
			c.writeJSON(filepath.Join(c.sb, "settings.json"), map[string]any{"permissions": map[string]any{"allow": []string{"mcp__own__echo"}}})
			own = c.embed("mcp__own__echo", `{"text":"hi"}`)
			if !strings.Contains(own.result, "hi") || !strings.Contains(own.result, "<mcp_response") {
				t.Errorf("allowed by the user: result %q (want the echo inside its envelope), error %q", own.result, own.err)
			}
			c.noMarker("examples/embed")
		})
	}
}
