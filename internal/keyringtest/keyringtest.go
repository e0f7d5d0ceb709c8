//go:build linux

// Package keyringtest runs a real Secret Service for tests:
// gnome-keyring-daemon (Debian's gnome-keyring) on a private D-Bus session
// bus started by dbus-run-session (Debian's dbus), in a temporary HOME and
// XDG_RUNTIME_DIR, with a login keyring created and unlocked without
// asking anyone. Tests point the program under test at it through
// [Keyring.Env] (DBUS_SESSION_BUS_ADDRESS), and can lock the keyring, or
// stop the service, to see what a user with a locked or absent keychain
// sees.
//
// Without the programs the calling test is skipped, except under CI=true,
// where it fails: .ci/run installs them.
package keyringtest

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/godbus/dbus/v5"
)

// Programs are what Start needs on PATH.
var Programs = []string{"dbus-run-session", "gnome-keyring-daemon"}

// Password unlocks the login keyring Start creates.
const Password = "switchboard-test"

// startWait bounds how long Start waits for the service to own its name
// on the bus: it is there in well under a second, but the machine may be
// busy.
const startWait = 30 * time.Second

// Keyring is one running Secret Service.
type Keyring struct {
	// Addr is the session bus address (DBUS_SESSION_BUS_ADDRESS).
	Addr string
	// Home and RuntimeDir are the service's HOME (its keyrings live in
	// Home/.local/share/keyrings) and XDG_RUNTIME_DIR.
	Home, RuntimeDir string

	cmd      *exec.Cmd
	stdin    io.WriteCloser
	stopOnce sync.Once
}

// Available reports whether the programs Start needs are installed.
func Available() bool {
	for _, p := range Programs {
		if _, err := exec.LookPath(p); err != nil {
			return false
		}
	}
	return true
}

// Start runs a Secret Service for the rest of the test (it stops at
// cleanup). It skips the test when the programs are missing, and fails it
// under CI=true.
func Start(t testing.TB) *Keyring {
	t.Helper()
	for _, p := range Programs {
		if _, err := exec.LookPath(p); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("%s is not installed (CI=true: the Secret Service tests must run; .ci/run installs gnome-keyring and dbus)", p)
			}
			t.Skipf("%s is not installed (apt-get install gnome-keyring dbus)", p)
		}
	}
	k, err := StartIn(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(k.Stop)
	return k
}

// script runs inside the bus: it reports the address, runs the daemon in
// the foreground (it reads the login keyring's password on stdin, and
// creates that keyring unlocked when there is none), and stops it when
// its own stdin closes.
const script = `printf '%s\n' "$DBUS_SESSION_BUS_ADDRESS"
printf '%s' "$KEYRINGTEST_PASSWORD" | gnome-keyring-daemon --foreground --unlock --components=secrets >/dev/null 2>&1 &
gkd=$!
cat >/dev/null
kill $gkd 2>/dev/null
wait $gkd 2>/dev/null
`

// StartIn runs a Secret Service whose HOME and XDG_RUNTIME_DIR are under
// dir, for callers without a testing.TB (a testscript command); the
// caller must Stop it. Most tests use Start.
func StartIn(dir string) (*Keyring, error) {
	k := &Keyring{Home: filepath.Join(dir, "home"), RuntimeDir: filepath.Join(dir, "run")}
	for _, d := range []string{k.Home, k.RuntimeDir} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, err
		}
	}
	cmd := exec.Command("dbus-run-session", "--", "sh", "-c", script)
	cmd.Env = append(cleanEnv(), "HOME="+k.Home, "XDG_RUNTIME_DIR="+k.RuntimeDir, "KEYRINGTEST_PASSWORD="+Password)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	cmd.Stderr = io.Discard
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting dbus-run-session: %w", err)
	}
	k.cmd, k.stdin = cmd, stdin
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || !strings.Contains(line, "=") {
		k.Stop()
		return nil, fmt.Errorf("dbus-run-session printed no bus address (%q, %v)", line, err)
	}
	k.Addr = strings.TrimSpace(line)
	deadline := time.Now().Add(startWait)
	for {
		up, err := k.serviceUp()
		if up {
			return k, nil
		}
		if time.Now().After(deadline) {
			k.Stop()
			return nil, fmt.Errorf("gnome-keyring-daemon did not own org.freedesktop.secrets on %s within %s (%v)", k.Addr, startWait, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// cleanEnv is the test's environment without any session bus or keyring
// of the machine's: the service must be this one.
func cleanEnv() []string {
	var out []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch {
		case k == "DBUS_SESSION_BUS_ADDRESS", k == "HOME", k == "XDG_RUNTIME_DIR", strings.HasPrefix(k, "GNOME_KEYRING"):
			continue
		}
		out = append(out, kv)
	}
	return out
}

func (k *Keyring) conn() (*dbus.Conn, error) {
	c, err := dbus.Connect(k.Addr)
	if err != nil {
		return nil, err
	}
	return c, nil
}

func (k *Keyring) serviceUp() (bool, error) {
	c, err := k.conn()
	if err != nil {
		return false, err
	}
	defer c.Close()
	var has bool
	err = c.BusObject().Call("org.freedesktop.DBus.NameHasOwner", 0, "org.freedesktop.secrets").Store(&has)
	return has, err
}

// Env is the environment a program needs to use this service: the bus
// address (and nothing of the machine's own session).
func (k *Keyring) Env() []string {
	return []string{"DBUS_SESSION_BUS_ADDRESS=" + k.Addr}
}

// Lock locks the login keyring, as a screen lock or `secret-tool lock`
// does: reading it then needs the user to unlock it.
func (k *Keyring) Lock() error {
	c, err := k.conn()
	if err != nil {
		return err
	}
	defer c.Close()
	var locked []dbus.ObjectPath
	var prompt dbus.ObjectPath
	obj := c.Object("org.freedesktop.secrets", "/org/freedesktop/secrets")
	err = obj.Call("org.freedesktop.Secret.Service.Lock", 0, []dbus.ObjectPath{"/org/freedesktop/secrets/collection/login"}).Store(&locked, &prompt)
	if err != nil {
		return fmt.Errorf("locking the login keyring: %w", err)
	}
	if len(locked) != 1 {
		return fmt.Errorf("locking the login keyring: locked %v, prompt %s", locked, prompt)
	}
	return nil
}

// Unlock unlocks the login keyring again with Password, as a login does
// (through gnome-keyring's own interface for that, without a prompt).
func (k *Keyring) Unlock() error {
	c, err := k.conn()
	if err != nil {
		return err
	}
	defer c.Close()
	svc := c.Object("org.freedesktop.secrets", "/org/freedesktop/secrets")
	var out dbus.Variant
	var session dbus.ObjectPath
	if err := svc.Call("org.freedesktop.Secret.Service.OpenSession", 0, "plain", dbus.MakeVariant("")).Store(&out, &session); err != nil {
		return fmt.Errorf("unlocking the login keyring: %w", err)
	}
	secret := struct {
		Session     dbus.ObjectPath
		Parameters  []byte
		Value       []byte
		ContentType string
	}{session, []byte{}, []byte(Password), "text/plain"}
	err = svc.Call("org.gnome.keyring.InternalUnsupportedGuiltRiddenInterface.UnlockWithMasterPassword", 0,
		dbus.ObjectPath("/org/freedesktop/secrets/collection/login"), secret).Err
	if err != nil {
		return fmt.Errorf("unlocking the login keyring: %w", err)
	}
	return nil
}

// Stop stops the service and the bus and waits for them. It is
// idempotent.
func (k *Keyring) Stop() {
	k.stopOnce.Do(func() {
		if k.stdin != nil {
			k.stdin.Close()
		}
		done := make(chan struct{})
		go func() { k.cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			// The group: the bus, the shell and the daemon.
			syscall.Kill(-k.cmd.Process.Pid, syscall.SIGKILL)
			<-done
		}
	})
}
