package cli

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/secretstore"
	"github.com/switchboard-mcp/switchboard/internal/testserver"
)

// On a terminal a missing secret is asked for once, without echo, stored,
// and used: the real command on a pseudo-terminal, the person's answer
// typed into it (issue 31, point 3). Headless, the same run is an error
// naming the secret and the command that sets it.
func TestSecretAskedOnTerminal(t *testing.T) {
	w := newGatewayWorld(t)
	w.env = append(w.env, "SWITCHBOARD_SECRET_STORE=file", "TERM=dumb")
	const value = "typed-at-the-prompt-0042"
	expected := filepath.Join(w.dir, "expected")
	if err := os.WriteFile(expected, []byte(value), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd, args := testserver.Command("echo")
	line := `test "$ASKED" = "$(cat "$0")" && exec "$@"`
	writeJSON(t, filepath.Join(w.sbHome, "mcp.json"), map[string]any{"mcpServers": map[string]any{
		"asks": map[string]any{"command": "sh", "args": append([]string{"-c", line, expected, cmd}, args...),
			"env": map[string]string{"ASKED": "${secret:ASKED_TOKEN}"}},
	}})
	call := []string{"call", "mcp__asks__echo", `{"text":"it started"}`, "--settings", `{"permissions":{"allow":["mcp__asks__echo"]}}`}

	// Headless: an error naming the secret and the command.
	out, err := w.command(t, call...).CombinedOutput()
	if err == nil || !bytes.Contains(out, []byte("secret ASKED_TOKEN (env ASKED): not set in")) || !bytes.Contains(out, []byte("run `switchboard secret set ASKED_TOKEN`")) {
		t.Fatalf("headless: %v\n%s", err, out)
	}

	got, err := onTerminal(t, w.command(t, call...), "Value of ASKED_TOKEN (not shown", value)
	if err != nil {
		t.Fatalf("call: %v\n%s", err, got)
	}
	for _, want := range []string{"Server \"asks\" uses secret ASKED_TOKEN, which is not in your store.", "Stored ASKED_TOKEN in ", "note: SWITCHBOARD_SECRET_STORE=file", "it started"} {
		if !strings.Contains(got, want) {
			t.Errorf("the terminal does not show %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, value) {
		t.Errorf("the typed value was echoed:\n%s", got)
	}
	v, err := secretstore.Open(&secretstore.Options{Dir: w.sbHome, Kind: secretstore.KindFile}).Get(context.Background(), "ASKED_TOKEN")
	if err != nil || v != value {
		t.Errorf("stored: %q, %v", v, err)
	}
}

// onTerminal runs c on a new pseudo-terminal (stdin, stdout and stderr),
// types answer and a newline once the screen shows prompt, and returns
// the screen when c has exited.
func onTerminal(t *testing.T, c *exec.Cmd, prompt, answer string) (string, error) {
	t.Helper()
	ptm, pts := openPTYPair(t)
	c.Stdin, c.Stdout, c.Stderr = pts, pts, pts
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	pts.Close()
	var mu sync.Mutex
	var screen bytes.Buffer
	asked := make(chan struct{})
	drained := make(chan struct{})
	go func() {
		defer close(drained)
		buf := make([]byte, 4096)
		var once sync.Once
		for {
			n, err := ptm.Read(buf)
			mu.Lock()
			screen.Write(buf[:n])
			if strings.Contains(screen.String(), prompt) {
				once.Do(func() { close(asked) })
			}
			mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	exited := make(chan error, 1)
	go func() { exited <- c.Wait() }()
	select {
	case <-asked:
		if _, err := ptm.Write([]byte(answer + "\n")); err != nil {
			t.Fatal(err)
		}
	case err := <-exited:
		exited <- err
	case <-time.After(60 * time.Second):
		c.Process.Kill()
	}
	err := <-exited
	// What c wrote last may still be in the terminal: it is all read once
	// the reads end (EIO when no process holds the terminal any more). A
	// process c left behind with it open only costs the wait.
	select {
	case <-drained:
	case <-time.After(10 * time.Second):
	}
	mu.Lock()
	defer mu.Unlock()
	return screen.String(), err
}

// On a terminal, a credential given to a shared file is offered to the
// user's store: the file gets ${secret:NAME} (issue 31, point 4).
func TestCredentialKeptInStoreOnTerminal(t *testing.T) {
	w := newGatewayWorld(t)
	w.env = append(w.env, "SWITCHBOARD_SECRET_STORE=file", "TERM=dumb")
	const token = "ghp_abcdefghijklmnopqrstuvwxyz0123456789"
	got, err := onTerminal(t, w.command(t, "mcp", "add", "--scope", "project", "-e", "GITHUB_TOKEN="+token, "gh", "--", "github-mcp-server", "stdio"),
		"keep it in your credential store as secret GITHUB_TOKEN? [y/N]", "y")
	if err != nil {
		t.Fatalf("mcp add: %v\n%s", err, got)
	}
	data, err := os.ReadFile(filepath.Join(w.ws, ".mcp.json"))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(data, []byte(token)) || !bytes.Contains(data, []byte(`"GITHUB_TOKEN": "${secret:GITHUB_TOKEN}"`)) {
		t.Errorf(".mcp.json:\n%s", data)
	}
	if !strings.Contains(got, "kept in your credential store as secret GITHUB_TOKEN") {
		t.Errorf("the note is missing:\n%s", got)
	}
	if v, err := secretstore.Open(&secretstore.Options{Dir: w.sbHome, Kind: secretstore.KindFile}).Get(context.Background(), "GITHUB_TOKEN"); err != nil || v != token {
		t.Errorf("stored: %q, %v", v, err)
	}
}

// In the user's own file a credential stays as typed, unless the person,
// asked on a terminal, keeps it in the credential store: then the file
// holds ${secret:NAME} (the fifteenth session's note: user and local scope
// kept every -e KEY=literal in the file). A no keeps it in the file.
func TestCredentialOfferedForYourOwnFileOnTerminal(t *testing.T) {
	w := newGatewayWorld(t)
	w.env = append(w.env, "SWITCHBOARD_SECRET_STORE=file", "TERM=dumb")
	const token = "ghp_abcdefghijklmnopqrstuvwxyz0123456789"
	got, err := onTerminal(t, w.command(t, "mcp", "add", "--scope", "user", "-e", "GITHUB_TOKEN="+token, "-e", "LOG_LEVEL=debug", "gh", "--", "github-mcp-server", "stdio"),
		"keep it in your credential store as secret GITHUB_TOKEN rather than in ~/.switchboard/mcp.json? [y/N]", "y")
	if err != nil {
		t.Fatalf("mcp add: %v\n%s", err, got)
	}
	data, err := os.ReadFile(filepath.Join(w.sbHome, "mcp.json"))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(data, []byte(token)) || !bytes.Contains(data, []byte(`"GITHUB_TOKEN": "${secret:GITHUB_TOKEN}"`)) || !bytes.Contains(data, []byte(`"LOG_LEVEL": "debug"`)) {
		t.Errorf("mcp.json:\n%s", data)
	}
	if !strings.Contains(got, "kept in your credential store as secret GITHUB_TOKEN, written into ~/.switchboard/mcp.json as") {
		t.Errorf("the note is missing:\n%s", got)
	}
	if v, err := secretstore.Open(&secretstore.Options{Dir: w.sbHome, Kind: secretstore.KindFile}).Get(context.Background(), "GITHUB_TOKEN"); err != nil || v != token {
		t.Errorf("stored: %q, %v", v, err)
	}

	const other = "ghp_zyxwvutsrqponmlkjihgfedcba9876543210"
	got, err = onTerminal(t, w.command(t, "mcp", "add", "--scope", "user", "-e", "GITHUB_TOKEN="+other, "mine", "--", "github-mcp-server", "stdio"),
		"rather than in ~/.switchboard/mcp.json? [y/N]", "n")
	if err != nil {
		t.Fatalf("mcp add: %v\n%s", err, got)
	}
	if data, _ := os.ReadFile(filepath.Join(w.sbHome, "mcp.json")); !bytes.Contains(data, []byte(`"GITHUB_TOKEN": "`+other+`"`)) {
		t.Errorf("a no did not keep the credential as typed:\n%s", data)
	}
}
