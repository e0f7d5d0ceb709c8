package proc

import (
	"errors"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
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
	sb := &Sandbox{Write: []string{ws}}
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

// probeBinary builds testdata/probe into a directory anyone may read (the
// unprivileged run uses it too), or takes $PROC_TEST_PROBE.
func probeBinary(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("PROC_TEST_PROBE"); p != "" {
		return p
	}
	dir, err := os.MkdirTemp("", "sandbox-probe-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	os.Chmod(dir, 0o755)
	bin := filepath.Join(dir, "probe")
	cmd := exec.Command("go", "build", "-o", bin, "./testdata/probe")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building the probe: %v\n%s", err, out)
	}
	return bin
}

// probe runs the probe (unsandboxed when sb is nil) against a planted
// key, a home directory holding it, a file outside the workspace and a
// loopback listener, and returns each attempt's line by name.
func probe(t *testing.T, bin string, sb func(home, ws string) *Sandbox) map[string]string {
	t.Helper()
	// Not below /tmp, which the sandbox replaces with its own: the home
	// must be hidden by the view, not by the private /tmp.
	home, err := os.MkdirTemp("/var/tmp", "sandbox-home-")
	if err != nil {
		t.Skipf("no /var/tmp: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(home) })
	ws := t.TempDir()
	os.MkdirAll(filepath.Join(home, ".ssh"), 0o700)
	key := filepath.Join(home, ".ssh", "id_ed25519")
	os.WriteFile(key, []byte("-----BEGIN OPENSSH PRIVATE KEY-----\nplanted\n"), 0o600)
	outside := filepath.Join(home, "outside.txt")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	var box *Sandbox
	if sb != nil {
		box = sb(home, ws)
	}
	out, errs := runSandboxed(t, box, ws, bin, key, home, outside, ln.Addr().String())
	got := map[string]string{}
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		name, rest, _ := strings.Cut(l, " ")
		got[name] = rest
	}
	if len(got) != 4 {
		t.Fatalf("probe output %q, stderr %q", out, errs)
	}
	if _, err := os.Stat(outside); err == nil && sb != nil {
		t.Errorf("the sandboxed probe wrote %s", outside)
	}
	return got
}

// A sandboxed server cannot read the planted key, list the home
// directory (it sees it empty), write outside its workspace or reach a
// loopback listener of the host; each attempt fails at once, with an
// error. The same probe unsandboxed does all four (the control).
func TestSandboxProbe(t *testing.T) {
	requireSandbox(t)
	bin := probeBinary(t)
	control := probe(t, bin, nil)
	for name, res := range control {
		if res != "ok" {
			t.Errorf("unsandboxed, %s: %s (the control must succeed)", name, res)
		}
	}
	start := time.Now()
	// A probe that waited instead of failing reports its own timeout.
	boxed := probe(t, bin, func(home, ws string) *Sandbox { return &Sandbox{Write: []string{ws}} })
	for name, res := range boxed {
		if !strings.HasPrefix(res, "error: ") || strings.Contains(res, "timeout") {
			t.Errorf("sandboxed, %s: %s (want an error, not a hang)", name, res)
		}
	}
	t.Logf("sandboxed probe (%v): %v", time.Since(start).Round(time.Millisecond), boxed)
}

// The same, for a user without any privilege: the namespaces are an
// unprivileged user's (run as root, the test runs itself as nobody), and
// so are the network allow-list's forwarder, the pid namespace with its
// /proc, the caches' overlays and the resolution beneath the workspace.
func TestSandboxProbeUnprivileged(t *testing.T) {
	requireSandbox(t)
	if os.Getuid() != 0 {
		t.Skip("already unprivileged: TestSandboxProbe is this test")
	}
	bin := probeBinary(t)
	dir, err := os.MkdirTemp("", "sandbox-nobody-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	os.Chmod(dir, 0o755)
	self := filepath.Join(dir, "proc.test")
	b, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(self, b, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(self, "-test.run", "^(TestSandboxProbe|TestSandboxView|TestSandboxNetworkAllowList|TestSandboxSeesOnlyItsOwnProcesses|TestSandboxCacheIsAPrivateCopy|TestSandboxBeneathRefusesLinksOut|TestSandboxInitForwardsAndReports|TestSandboxSeesNoOtherIPC|TestSandboxReadsNoKeyring)$", "-test.v", "-test.count=1")
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=/nonexistent", "TMPDIR=/tmp", "PROC_TEST_PROBE=" + bin, "CI=" + os.Getenv("CI")}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	t.Logf("as nobody:\n%s", out)
	for _, name := range []string{"TestSandboxProbe", "TestSandboxNetworkAllowList", "TestSandboxSeesOnlyItsOwnProcesses",
		"TestSandboxCacheIsAPrivateCopy", "TestSandboxBeneathRefusesLinksOut", "TestSandboxInitForwardsAndReports",
		"TestSandboxSeesNoOtherIPC", "TestSandboxReadsNoKeyring"} {
		if err != nil || !strings.Contains(string(out), "--- PASS: "+name+" ") {
			t.Fatalf("as nobody, %s did not pass: %v", name, err)
		}
	}
}

// TestSandboxWithoutSupervisorNamesTheEntryPoint: an embedder whose main
// never called the supervisor entry point is told which function to call,
// by the name it can reach (the front door's), not the internal package's.
func TestSandboxWithoutSupervisorNamesTheEntryPoint(t *testing.T) {
	_, _, err := sandboxCommand(&Sandbox{}, "srv", nil, false)
	if !errors.Is(err, ErrSandboxUnavailable) {
		t.Fatalf("err = %v, want ErrSandboxUnavailable", err)
	}
	if !strings.Contains(err.Error(), "switchboard.MaybeRunSupervisor") {
		t.Fatalf("err = %q, want it to name switchboard.MaybeRunSupervisor", err)
	}
}
