package proc

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// requireSandbox skips where the kernel cannot sandbox, except under
// CI=true, where a missing mechanism is a failure: CI must test it.
func requireSandbox(t *testing.T) {
	t.Helper()
	if why := SandboxSupport(); why != "" {
		if os.Getenv("CI") == "true" {
			t.Fatalf("the sandbox is not available on this CI machine: %s", why)
		}
		t.Skipf("no sandbox here: %s", why)
	}
}

// runSandboxed starts command under sb and returns its stdout (stdin
// closed at once).
func runSandboxed(t *testing.T, sb *Sandbox, dir string, command string, args ...string) (string, []string) {
	t.Helper()
	p, err := Start(Spec{Command: command, Args: args, Env: testEnv(), Dir: dir, Supervise: true, Sandbox: sb})
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	p.Stdin().Close()
	var out []byte
	within(t, 20*time.Second, "the sandboxed program", func() { out, _ = io.ReadAll(p.Stdout()) })
	p.Close(time.Second)
	p.WaitStderr(time.Second)
	return string(out), p.StderrTail(0)
}

func TestSandboxView(t *testing.T) {
	requireSandbox(t)
	ws := t.TempDir()
	home := t.TempDir()
	os.WriteFile(filepath.Join(home, "secret"), []byte("x"), 0o600)
	sb := &Sandbox{Write: []string{ws}, Home: home}
	out, errs := runSandboxed(t, sb, ws, "sh", "-c", `id -u; ls -a `+home+`; echo hi > `+ws+`/w && cat `+ws+`/w; ls /tmp | wc -l; grep CapEff /proc/self/status; echo x > /usr/nope 2>&1 || echo usr-refused`)
	t.Logf("out:\n%s\nstderr: %q", out, errs)
	for _, want := range []string{"hi\n", "CapEff:\t0000000000000000", "usr-refused"} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q", want)
		}
	}
	if strings.Contains(out, "secret") {
		t.Errorf("the home directory's file is visible")
	}
}
