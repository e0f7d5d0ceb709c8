package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"github.com/switchboard-mcp/switchboard/host"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// hostileDir is the hostile-repository corpus (docs/security.md, The
// hostile-repository corpus): each directory a
// workspace whose server writes a marker file the moment it is spawned.
const hostileDir = "../../trust/testdata/hostile"

// hostileWant is a case's want.json.
type hostileWant struct {
	Server string `json:"server"`
	State  string `json:"state"`
	Scope  string `json:"scope"`
	// Changed and Reason: what status must say changed (approval-stale).
	Changed []string `json:"changed"`
	Reason  string   `json:"reason"`
	// ApproveElsewhere approves the same definition in another workspace.
	ApproveElsewhere bool `json:"approveElsewhere"`
	// Settings is a --settings value passed to every command.
	Settings string `json:"settings"`
	// Approve: the user approves the definition as the repository wrote
	// it, as a user shown the prompt might, before anything else runs.
	Approve bool `json:"approve"`
	// CallExit is call's exit code (default 3, refused); a server held for
	// another reason than approval (invalid, disabled) exits otherwise.
	CallExit int `json:"callExit"`
}

// gated reports whether the case holds its server for want of approval,
// so that every message must name the approving command.
func (w hostileWant) gated() bool {
	return w.State == "needs-approval" || w.State == "approval-stale"
}

// hostileCase is one corpus case set up in a private world.
type hostileCase struct {
	*rtWorld
	dir    string
	marker string
	want   hostileWant
}

func newHostileCase(t *testing.T, name string) *hostileCase {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("the corpus servers are sh scripts")
	}
	c := &hostileCase{rtWorld: newRTWorld(t), dir: filepath.Join(hostileDir, name)}
	// The marker lives in the workspace, which a project server's default
	// sandbox lets it write: a marker outside could stay absent because of
	// the sandbox alone, and the corpus would pass for the wrong reason.
	c.marker = filepath.Join(c.proj, ".marker")
	b, err := os.ReadFile(filepath.Join(c.dir, "want.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &c.want); err != nil {
		t.Fatalf("want.json: %v", err)
	}
	if _, err := os.Stat(filepath.Join(c.dir, "user-mcp.json")); err == nil {
		c.put("user-mcp.json", filepath.Join(c.sb, "mcp.json"))
	}
	// Everything else in the case is the repository.
	err = filepath.WalkDir(c.dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(c.dir, p)
		switch rel {
		case "want.json", "user-mcp.json", "approved.mcp.json":
			return nil
		}
		if rel == ".mcp.json" && c.has("approved.mcp.json") {
			return nil // written after the approval
		}
		c.put(rel, filepath.Join(c.proj, rel))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func (c *hostileCase) has(rel string) bool {
	_, err := os.Stat(filepath.Join(c.dir, rel))
	return err == nil
}

// put copies a case file to dst with @MARKER@ and @EXE@ made absolute.
func (c *hostileCase) put(rel, dst string) {
	c.t.Helper()
	b, err := os.ReadFile(filepath.Join(c.dir, rel))
	if err != nil {
		c.t.Fatal(err)
	}
	s := strings.NewReplacer("@MARKER@", c.marker, "@EXE@", c.exe).Replace(string(b))
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		c.t.Fatal(err)
	}
	if err := os.WriteFile(dst, []byte(s), 0o644); err != nil {
		c.t.Fatal(err)
	}
}

// run runs the real CLI in the case's world; MARKER and EXE are set for
// ${VAR} expansion.
func (c *hostileCase) run(args ...string) (stdout, stderr string, code int) {
	c.t.Helper()
	f, out, errOut, args := c.command(args)
	code = Run(context.Background(), f, args)
	return out.String(), errOut.String(), code
}

// command is the factory of a run in the case's world (MARKER and EXE set)
// and its arguments, with the case's --settings.
func (c *hostileCase) command(args []string) (f *Factory, out, errOut *bytes.Buffer, _ []string) {
	f, _, out, errOut = c.factory(false)
	getenv := f.Getenv
	f.Getenv = func(k string) (string, bool) {
		switch k {
		case "MARKER":
			return c.marker, true
		case "EXE":
			return c.exe, true
		}
		return getenv(k)
	}
	if c.want.Settings != "" {
		args = append([]string{"--settings", c.want.Settings}, args...)
	}
	return f, out, errOut, args
}

// serve runs `serve --stdio` as a client drives it: initialize, then
// tools/list, and stdin closes once the list is answered. The first list
// waits for the gateway's first sync, which gives servers --wait to
// connect: an ungated server is spawned by then.
func (c *hostileCase) serve() (stderr string, code int) {
	c.t.Helper()
	f, _, errOut, args := c.command([]string{"serve", "--stdio"})
	in, feed := io.Pipe()
	listed := make(chan struct{})
	f.IO.In = in
	f.IO.Out = &answerWatch{id: `"id":2`, seen: listed}
	go func() {
		io.WriteString(feed, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`+"\n"+
			`{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n"+
			`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`+"\n")
		select {
		case <-listed:
		case <-time.After(60 * time.Second): // a guard against a hang, not a timing
		}
		feed.Close()
	}()
	code = Run(context.Background(), f, args)
	return errOut.String(), code
}

// answerWatch is a client's stdout: it closes seen once a line holding id
// has been written.
type answerWatch struct {
	mu   sync.Mutex
	buf  []byte
	id   string
	seen chan struct{}
	once sync.Once
}

func (w *answerWatch) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, p...)
	if strings.Contains(string(w.buf), w.id) {
		w.once.Do(func() { close(w.seen) })
	}
	return len(p), nil
}

func (c *hostileCase) noMarker(after string) {
	c.t.Helper()
	if _, err := os.Stat(c.marker); err == nil {
		c.t.Fatalf("the hostile server was spawned by %s: the marker file exists", after)
	}
}

// approveFirst approves what the case says the user approved before the
// repository changed it.
func (c *hostileCase) approveFirst() {
	c.t.Helper()
	if c.has("approved.mcp.json") {
		c.put("approved.mcp.json", filepath.Join(c.proj, ".mcp.json"))
		if _, errOut, code := c.run("mcp", "approve", c.want.Server, "--yes"); code != 0 {
			c.t.Fatalf("approving the first definition: exit %d\n%s", code, errOut)
		}
		c.put(".mcp.json", filepath.Join(c.proj, ".mcp.json"))
	}
	if c.want.ApproveElsewhere {
		other := filepath.Join(c.work, "other")
		c.put(".mcp.json", filepath.Join(other, ".mcp.json"))
		if _, errOut, code := c.run("--workspace", other, "mcp", "approve", c.want.Server, "--yes"); code != 0 {
			c.t.Fatalf("approving in the other workspace: exit %d\n%s", code, errOut)
		}
	}
	if c.want.Approve {
		if _, errOut, code := c.run("mcp", "approve", c.want.Server, "--yes"); code != 0 {
			c.t.Fatalf("approving the definition as written: exit %d\n%s", code, errOut)
		}
	}
	c.noMarker("mcp approve")
}

// status returns the server's status entry from status --json.
func (c *hostileCase) status() map[string]any {
	c.t.Helper()
	out, errOut, code := c.run("status", "--json")
	if code != 0 && !(code == ExitUsage && c.want.State == "error") { // a configuration error exits 2
		c.t.Fatalf("status: exit %d\n%s", code, errOut)
	}
	var got struct {
		Servers []map[string]any `json:"servers"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		c.t.Fatalf("status --json: %v\n%s", err, out)
	}
	for _, s := range got.Servers {
		if s["name"] == c.want.Server {
			return s
		}
	}
	c.t.Fatalf("status lists no server %q:\n%s", c.want.Server, out)
	return nil
}

// TestHostileRepos: no case of the corpus spawns anything, in any command
// that starts servers, and each is held in the right state with a reason
// that names the approving command.
func TestHostileRepos(t *testing.T) {
	entries, err := os.ReadDir(hostileDir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) < 10 {
		t.Fatalf("the corpus has %d cases; expected at least 10", len(entries))
	}
	for _, e := range entries {
		t.Run(e.Name(), func(t *testing.T) {
			c := newHostileCase(t, e.Name())
			c.approveFirst()

			st := c.status()
			c.noMarker("status")
			if st["state"] != c.want.State {
				t.Errorf("state = %v, want %s (reason %v)", st["state"], c.want.State, st["error"])
			}
			reason, _ := st["error"].(string)
			if c.want.gated() && !strings.Contains(reason, "switchboard mcp approve "+c.want.Server) {
				t.Errorf("reason %q does not name the approving command", reason)
			}
			for _, f := range c.want.Changed {
				if !strings.Contains(reason, f) {
					t.Errorf("reason %q does not say %s changed", reason, f)
				}
			}
			if c.want.Reason != "" && !strings.Contains(reason, c.want.Reason) {
				t.Errorf("reason %q does not say %q", reason, c.want.Reason)
			}
			if c.want.Scope != "" && st["scope"] != c.want.Scope {
				t.Errorf("scope = %v, want %s", st["scope"], c.want.Scope)
			}

			for _, args := range [][]string{{"status"}, {"tools"}, {"prompts"}, {"resources"}} {
				c.run(args...)
				c.noMarker(strings.Join(args, " "))
			}
			_, errOut, code := c.run("tools", "--server", c.want.Server)
			c.noMarker("tools --server")
			if c.want.gated() && code != ExitRefused {
				t.Errorf("tools --server %s: exit %d, want 3\n%s", c.want.Server, code, errOut)
			}
			wantExit := ExitRefused
			if c.want.CallExit != 0 {
				wantExit = c.want.CallExit
			}
			_, errOut, code = c.run("call", "mcp__"+c.want.Server+"__echo", `{"text":"hi"}`)
			c.noMarker("call")
			if code != wantExit {
				t.Errorf("call: exit %d, want %d\n%s", code, wantExit, errOut)
			}
			if c.want.gated() && (!strings.Contains(errOut, host.State(c.want.State).Phrase()) || !strings.Contains(errOut, "switchboard mcp approve "+c.want.Server)) {
				t.Errorf("call's message does not give the state and the approving command:\n%s", errOut)
			}
			// The gateway, as a client drives it: its first tools/list waits
			// (--wait) for the servers, so an ungated server would spawn here.
			if errOut, code := c.serve(); code != 0 && !(code == ExitUsage && c.want.State == "error") {
				t.Errorf("serve --stdio: exit %d\n%s", code, errOut)
			}
			c.noMarker("serve --stdio")
		})
	}
}

// TestHostileWitness proves the marker witness works: once the user
// approves the current definition, the same server does start and writes
// its marker. Without this, a corpus server that could never run would
// pass TestHostileRepos for the wrong reason.
func TestHostileWitness(t *testing.T) {
	for _, name := range []string{"plain", "var-trick", "command-swapped"} {
		t.Run(name, func(t *testing.T) {
			c := newHostileCase(t, name)
			c.approveFirst()
			if _, errOut, code := c.run("mcp", "approve", c.want.Server, "--yes"); code != 0 {
				t.Fatalf("approve: exit %d\n%s", code, errOut)
			}
			// serve spawns it (the same witness TestHostileRepos relies on
			// for serve), then status finds it connected.
			if errOut, code := c.serve(); code != 0 {
				t.Fatalf("serve --stdio: exit %d\n%s", code, errOut)
			}
			if !fileExists(c.marker) {
				t.Fatal("serve --stdio did not spawn the approved server: no marker")
			}
			os.Remove(c.marker)
			st := c.status()
			if st["state"] != "connected" {
				t.Fatalf("approved server is %v: %v", st["state"], st["error"])
			}
			if _, err := os.Stat(c.marker); err != nil {
				t.Fatalf("approved server ran but the marker is missing: %v", err)
			}
		})
	}
}

// TestHostileRepoSettingsIgnored: the repository's own settings files are
// not read for approval, while the same keys in the user's settings are.
func TestHostileRepoSettingsIgnored(t *testing.T) {
	c := newHostileCase(t, "repo-settings-enable-all")
	if st := c.status(); st["state"] != "needs-approval" {
		t.Fatalf("state = %v", st["state"])
	}
	c.noMarker("status")
	// The same document, in the user's settings, does approve.
	c.put(".switchboard/settings.json", filepath.Join(c.sb, UserSettingsFile))
	if st := c.status(); st["state"] != "connected" {
		t.Fatalf("user settings did not pre-approve: %v %v", st["state"], st["error"])
	}
	if diff := cmp.Diff(true, fileExists(c.marker)); diff != "" {
		t.Errorf("marker (-want +got): %s", diff)
	}
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// TestHostileShadowWarned: a repository server named like the user's own
// shows, in the approval review, that it replaces the user's server and
// inherits the rules written for that name.
func TestHostileShadowWarned(t *testing.T) {
	c := newHostileCase(t, "shadow-user-name")
	out, errOut, _ := c.run("mcp", "approve", c.want.Server)
	if !strings.Contains(out+errOut, `It has the name of your own server "github" (user scope) and replaces it`) ||
		!strings.Contains(out+errOut, "your permission rules for mcp__github apply to it") {
		t.Errorf("the review does not say it replaces the user's server:\n%s\n%s", out, errOut)
	}
	c.noMarker("mcp approve")
}
