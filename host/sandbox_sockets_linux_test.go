package host_test

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/testserver"
)

// socketListener answers each connection to a Unix socket at path (made
// with its directory) with "LEAK name", whatever it is sent.
func socketListener(t *testing.T, name, path string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			fmt.Fprintf(c, "LEAK %s\n", name)
			c.Close()
		}
	}()
}

// userRuntimeDir is a directory of this test's in the user's runtime
// directory ($XDG_RUNTIME_DIR, else /run/user/<uid>), where the session
// bus, the keyring's and gpg's sockets and the systemd user manager's
// live; under /var/tmp where this user has none to write.
func userRuntimeDir(t *testing.T) string {
	t.Helper()
	for _, d := range []string{os.Getenv("XDG_RUNTIME_DIR"), "/run/user/" + strconv.Itoa(os.Getuid())} {
		if d == "" {
			continue
		}
		if dir, err := os.MkdirTemp(d, "switchboard-test-"); err == nil {
			t.Cleanup(func() { os.RemoveAll(dir) })
			return dir
		}
	}
	dir, err := os.MkdirTemp("/var/tmp", "switchboard-test-run-")
	if err != nil {
		t.Skip(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	t.Logf("no runtime directory of this user's to write: %s stands for it", dir)
	return dir
}

func fileExists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// startDaemon runs a real daemon for the rest of the test and waits for
// its socket at path; false (logged) when the program is not installed.
func startDaemon(t *testing.T, path string, env []string, name string, args ...string) bool {
	t.Helper()
	if _, err := exec.LookPath(name); err != nil {
		t.Logf("%s is not installed: a stand-in listens at %s", name, path)
		return false
	}
	os.MkdirAll(filepath.Dir(path), 0o700)
	cmd := exec.Command(name, args...)
	cmd.Env = append(os.Environ(), env...)
	out := &strings.Builder{}
	cmd.Stdout, cmd.Stderr = out, out
	// A group of its own, ended whole (gpg-agent starts helpers of its
	// own), and a wait that no helper holding the output can prolong.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.WaitDelay = time.Second
	if err := cmd.Start(); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	t.Cleanup(func() { syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); cmd.Wait(); os.Remove(path) })
	for range 200 {
		if fi, err := os.Stat(path); err == nil && fi.Mode()&os.ModeSocket != 0 {
			return true
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("%s made no socket at %s: %s", name, path, out)
	return false
}

// A sandboxed server is an attacker with the user's uid: whatever local
// channel of the user's it can connect to answers it as the user. The
// channels of a desktop session, each where its real daemon puts it (the
// real daemon where it is installed): the D-Bus session bus (and through
// it the Secret Service, every keyring secret), the systemd user manager
// and rootless Docker/Podman in $XDG_RUNTIME_DIR, ssh-agent in
// /tmp/ssh-*, gpg-agent in ~/.gnupg, the X server (keystroke injection)
// in /tmp/.X11-unix and at its abstract address. A repository's server
// in its default sandbox, and the user's own server sandboxed with the
// full network, reach none of them; a socket in the workspace, which the
// sandbox shows, is reached (docs/security.md says so). A repository's
// server is not told where they are either (SSH_AUTH_SOCK,
// DBUS_SESSION_BUS_ADDRESS, DISPLAY, XDG_RUNTIME_DIR, GPG_AGENT_INFO).
// (HOME is this test's own: not parallel.)
func TestAttackUserLocalChannels(t *testing.T) {
	requireSandboxHost(t)
	home, _, _ := plantHome(t)
	t.Setenv("HOME", home)
	rt := userRuntimeDir(t)

	places := map[string]string{} // what → its socket's path
	var env []string
	// The session bus, on a real dbus-daemon where there is one.
	places["D-Bus session bus"] = filepath.Join(rt, "bus")
	if !startDaemon(t, places["D-Bus session bus"], nil, "dbus-daemon", "--session", "--nofork", "--nopidfile",
		"--address=unix:path="+places["D-Bus session bus"]) {
		socketListener(t, "dbus", places["D-Bus session bus"])
	}
	env = append(env, "DBUS_SESSION_BUS_ADDRESS=unix:path="+places["D-Bus session bus"], "XDG_RUNTIME_DIR="+rt)
	// ssh-agent, in the directory of its own it makes in /tmp.
	sshDir, err := os.MkdirTemp("/tmp", "ssh-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(sshDir) })
	places["ssh-agent"] = filepath.Join(sshDir, "agent."+strconv.Itoa(os.Getpid()))
	if !startDaemon(t, places["ssh-agent"], nil, "ssh-agent", "-D", "-a", places["ssh-agent"]) {
		socketListener(t, "ssh-agent", places["ssh-agent"])
	}
	env = append(env, "SSH_AUTH_SOCK="+places["ssh-agent"])
	// gpg-agent, where gpg puts it for a home of ~/.gnupg: in gpg's
	// directory of the runtime directory where there is one, else in
	// ~/.gnupg (a stand-in there too, as older gpg and some systems keep).
	gnupg := filepath.Join(home, ".gnupg")
	os.MkdirAll(gnupg, 0o700)
	places["gpg-agent in ~/.gnupg"] = filepath.Join(gnupg, "S.gpg-agent")
	// With HOME the test's, that is the directory of the user's own
	// agent's sockets (/run/user/<uid>/gnupg): no agent is started where
	// one runs already.
	if out, err := exec.Command("gpgconf", "--homedir", gnupg, "--list-dirs", "agent-socket").Output(); err != nil {
		t.Logf("gpgconf: %v: a stand-in listens in ~/.gnupg", err)
	} else if sock := strings.TrimSpace(string(out)); fileExists(sock) {
		t.Logf("a gpg-agent of the user's listens at %s: a stand-in listens in ~/.gnupg", sock)
	} else {
		if startDaemon(t, sock, nil, "gpg-agent", "--homedir", gnupg, "--daemon", "--no-detach") {
			// Asked to end before it is killed (cleanups run last first),
			// it removes all its sockets.
			t.Cleanup(func() { exec.Command("gpgconf", "--homedir", gnupg, "--kill", "gpg-agent").Run() })
			places["gpg-agent"] = sock
			env = append(env, "GPG_AGENT_INFO="+sock+":0:1")
		}
	}
	if _, ok := places["gpg-agent"]; !ok || places["gpg-agent"] != places["gpg-agent in ~/.gnupg"] {
		socketListener(t, "gpg-agent", places["gpg-agent in ~/.gnupg"])
	} else {
		delete(places, "gpg-agent in ~/.gnupg")
	}
	// The rest as stand-ins where their daemons put them.
	places["systemd user manager"] = filepath.Join(rt, "systemd", "private")
	places["rootless Docker"] = filepath.Join(rt, "docker.sock")
	places["Podman"] = filepath.Join(rt, "podman", "podman.sock")
	places["GNOME Keyring control"] = filepath.Join(rt, "keyring", "control")
	for _, what := range []string{"systemd user manager", "rootless Docker", "Podman", "GNOME Keyring control"} {
		socketListener(t, what, places[what])
	}
	// The X server, where /tmp/.X11-unix may be written (it is made by
	// root, sticky, on a desktop).
	abstractX := ""
	if err := os.MkdirAll("/tmp/.X11-unix", 0o1777); err == nil {
		n := 90 + os.Getpid()%100
		path := fmt.Sprintf("/tmp/.X11-unix/X%d", n)
		if fileExists(path) {
			t.Logf("display :%d is taken: no X server", n)
		} else if startDaemon(t, path, nil, "Xvfb", fmt.Sprintf(":%d", n), "-nolisten", "tcp") {
			places["X server"] = path
			abstractX = "@" + path
			env = append(env, fmt.Sprintf("DISPLAY=:%d", n))
		}
	}
	// A control socket of the user's in the workspace (as Git's fsmonitor
	// daemon keeps): the sandbox shows the workspace, and so this.
	ws := t.TempDir()
	inWorkspace := filepath.Join(ws, ".git", "fsmonitor--daemon.ipc")
	socketListener(t, "workspace", inWorkspace)

	// Each server writes its environment to the workspace, then serves
	// as the netprobe server.
	exe, args := testserver.Command("netprobe")
	probe := func(name string) config.Server {
		return config.Server{Type: config.TypeStdio, Command: "sh",
			Args: append([]string{"-c", "env > env-" + name + ".txt; exec \"$0\" \"$@\"", exe}, args...)}
	}
	repo := resolved("repo", probe("repo"))
	repo.Scope, repo.Trust = config.ScopeProject, config.TrustRepo
	mineDef := probe("mine")
	mineDef.Sandbox = &config.Sandbox{Network: config.SandboxNetwork{All: true}}
	mine := resolved("mine", mineDef)
	// The user's own, shown the runtime directory: what a sandbox of
	// the user's lists it sees, and is told of.
	shownDef := probe("shown")
	shownDef.Sandbox = &config.Sandbox{FS: &config.SandboxFS{Read: []string{rt}, Write: []string{ws}}}
	shown := resolved("shown", shownDef)
	cfg := cfgOf(repo, mine, shown)
	cfg.Workspace = ws
	h := newHost(t, cfg, &host.Options{Gate: approved, Environ: func() []string { return append(os.Environ(), env...) }})
	if _, err := h.Tools(ctxFor(t, 60*time.Second)); err != nil {
		t.Fatal(err)
	}
	connect := func(server, path, send string) (string, bool) {
		t.Helper()
		res := mustCall(t, h, "mcp__"+server+"__connect", map[string]any{"addr": path, "way": "unix", "send": send})
		return textOf(res), !res.IsError
	}
	// What each would be sent by a client of it: D-Bus's authentication
	// (its answer, "OK <guid>", is the bus's), else nothing.
	sends := map[string]string{"D-Bus session bus": "\x00AUTH EXTERNAL " + fmt.Sprintf("%x", strconv.Itoa(os.Getuid())) + "\r\n"}
	for what, path := range places {
		// The test's own process reaches each: the probe can tell.
		c, err := net.Dial("unix", path)
		if err != nil {
			t.Fatalf("%s at %s: the test itself cannot connect: %v", what, path, err)
		}
		c.Close()
		t.Logf("%s: %s", what, path)
		for _, server := range []string{"repo", "mine"} {
			if got, ok := connect(server, path, sends[what]); ok || !strings.Contains(got, "no such file or directory") {
				t.Errorf("%s server reached the %s at %s: %q", server, what, path, got)
			}
		}
	}
	if got, ok := connect("repo", inWorkspace, ""); !ok || !strings.Contains(got, "LEAK workspace") {
		t.Errorf("the repository's server did not reach the socket in its workspace %s: %q (the probe does not work)", inWorkspace, got)
	}
	// The X server's abstract address is in the network namespace: the
	// repository's server has one of its own; the user's, with the full
	// network, shares the host's, where Landlock (ABI 6) scopes it out.
	if abstractX != "" {
		if got, ok := connect("repo", abstractX, ""); ok {
			t.Errorf("the repository's server reached the X server at %s: %q", abstractX, got)
		}
		v, err := llsys.LandlockGetABIVersion()
		if p := host.SandboxOf(&mine, ws, nil); p.AbstractSockets != (err == nil && v < 6) {
			t.Errorf("Landlock ABI %d (%v): the review says abstract sockets reachable: %v", v, err, p.AbstractSockets)
		}
		if err != nil || v < 6 {
			t.Logf("Landlock ABI %d: the abstract socket %s is reachable with the full network (docs/security.md)", v, abstractX)
		} else if got, ok := connect("mine", abstractX, ""); ok {
			t.Errorf("the user's server with the full network reached the X server at %s: %q", abstractX, got)
		}
	}
	if got, ok := connect("shown", places["D-Bus session bus"], sends["D-Bus session bus"]); !ok || !strings.Contains(got, "OK ") {
		t.Errorf("the user's server shown %s did not reach the bus there: %q", rt, got)
	}
	// None is told where they are (the repository's server is passed
	// none of these variables; the user's whole environment, but for
	// those naming what its view lacks), but where its view has them.
	envOf := func(server string) map[string]bool {
		b, err := os.ReadFile(filepath.Join(ws, "env-"+server+".txt"))
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]bool{}
		sc := bufio.NewScanner(strings.NewReader(string(b)))
		for sc.Scan() {
			got[sc.Text()] = true
		}
		return got
	}
	for _, server := range []string{"repo", "mine"} {
		got := envOf(server)
		for _, kv := range env {
			if got[kv] && (server == "repo" || !strings.HasPrefix(kv, "DISPLAY=")) {
				t.Errorf("the %s server was given %s", server, kv)
			}
		}
	}
	got := envOf("shown")
	for _, kv := range []string{"XDG_RUNTIME_DIR=" + rt, "DBUS_SESSION_BUS_ADDRESS=unix:path=" + places["D-Bus session bus"]} {
		if !got[kv] {
			t.Errorf("the user's server shown %s was not given %s", rt, kv)
		}
	}
	if got["SSH_AUTH_SOCK="+places["ssh-agent"]] {
		t.Errorf("the user's server shown %s was given SSH_AUTH_SOCK, which it does not see", rt)
	}
}
