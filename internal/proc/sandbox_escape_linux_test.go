package proc

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// A path below Sandbox.Beneath is resolved beneath it at the start: a
// link that leads out (relative or absolute) refuses the start, naming
// the link; a link that stays inside is followed; a FIFO is refused. The
// file outside that the link points to is never shown.
func TestSandboxBeneathRefusesLinksOut(t *testing.T) {
	requireSandbox(t)
	ws := t.TempDir()
	os.MkdirAll(filepath.Join(ws, "build"), 0o755)
	os.WriteFile(filepath.Join(ws, "build", "inside.txt"), []byte("inside\n"), 0o644)
	os.Symlink("../../../../../../..", filepath.Join(ws, "out"))
	os.Symlink("/", filepath.Join(ws, "abs"))
	os.Symlink("build", filepath.Join(ws, "good"))
	os.Symlink("build/../..", filepath.Join(ws, "sneaky"))
	syscall.Mkfifo(filepath.Join(ws, "fifo"), 0o644)
	// A program in the workspace that is a link out, in a view that does
	// not show the workspace (its program is shown on its own).
	os.Symlink("../../../../../../../usr/bin/cat", filepath.Join(ws, "prog"))
	p, err := Start(Spec{Command: filepath.Join(ws, "prog"), Env: testEnv(), Dir: "/", Supervise: true,
		Sandbox: &Sandbox{Read: []string{filepath.Join(ws, "build")}, Beneath: ws}})
	if err == nil {
		p.Close(0)
		t.Errorf("a program that is a link out of the workspace started")
	} else if !strings.Contains(err.Error(), "the program: "+filepath.Join(ws, "prog")+" is a link to") {
		t.Errorf("error %q does not name the program's link", err)
	}
	for _, tt := range []struct {
		name string
		sb   *Sandbox
		want string // in Start's error; "" for a start
	}{
		{"write through a link out", &Sandbox{Read: []string{ws}, Write: []string{filepath.Join(ws, "out")}, Beneath: ws}, "leads out of " + ws},
		{"read through a link out", &Sandbox{Read: []string{filepath.Join(ws, "out", "etc")}, Beneath: ws}, "leads out of " + ws},
		{"an absolute link", &Sandbox{Write: []string{filepath.Join(ws, "abs")}, Beneath: ws}, "absolute path /"},
		{"a link climbing out by ..", &Sandbox{Write: []string{filepath.Join(ws, "sneaky")}, Beneath: ws}, "leads out of " + ws},
		{"a FIFO", &Sandbox{Read: []string{filepath.Join(ws, "fifo")}, Beneath: ws}, "FIFO"},
		{"a link inside", &Sandbox{Write: []string{filepath.Join(ws, "good")}, Beneath: ws}, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p, err := Start(Spec{Command: "sh", Args: []string{"-c", "cat " + filepath.Join(ws, "good", "inside.txt")}, Env: testEnv(), Dir: "/", Supervise: true, Sandbox: tt.sb})
			if tt.want == "" {
				if err != nil {
					t.Fatalf("Start: %v", err)
				}
				p.Stdin().Close()
				out, _ := io.ReadAll(p.Stdout())
				p.Close(time.Second)
				if string(out) != "inside\n" {
					t.Errorf("through the link inside: %q, stderr %q", out, p.StderrTail(0))
				}
				return
			}
			if err == nil {
				p.Close(0)
				t.Fatalf("started; want an error saying %q", tt.want)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q does not say %q", err, tt.want)
			}
		})
	}
}

// The check and the mount cannot be told apart by a swap: the helper
// binds the directory it opened beneath the workspace, so a link put in
// its place between the two (by the test hook, at the very moment a
// racing server would) changes nothing the server sees.
func TestSandboxBeneathBindsWhatItChecked(t *testing.T) {
	requireSandbox(t)
	ws := t.TempDir()
	out := filepath.Join(ws, "out")
	os.MkdirAll(out, 0o755)
	os.WriteFile(filepath.Join(out, "inside.txt"), []byte("inside\n"), 0o644)
	p, err := Start(Spec{Command: "sh", Args: []string{"-c", "ls " + out + "; echo x > " + out + "/new && echo wrote"},
		Env: append(testEnv(), swapTestEnv+"="+out+"=../../../../../../.."), Dir: "/", Supervise: true,
		Sandbox: &Sandbox{Write: []string{out}, Beneath: ws}})
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	p.Stdin().Close()
	b, _ := io.ReadAll(p.Stdout())
	p.Close(time.Second)
	if fi, err := os.Lstat(out); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("the hook did not swap %s for a link: %v", out, err)
	}
	got := string(b)
	if !strings.Contains(got, "inside.txt") || strings.Contains(got, "etc") || strings.Contains(got, "usr") {
		t.Errorf("after the swap the server sees %q (stderr %q), want the directory that was checked", got, p.StderrTail(0))
	}
	if _, err := os.Stat("/new"); err == nil {
		t.Errorf("the server wrote /new through the swapped link")
	}
}

// Whatever a sandbox lists, it never writes the root, /proc or /sys, and
// never sees the host's /proc: Start refuses, naming the path, also when
// it is reached through a link.
func TestSandboxNeverWritesTheSystem(t *testing.T) {
	requireSandbox(t)
	dir := t.TempDir()
	os.Symlink("/", filepath.Join(dir, "root"))
	os.Symlink("/proc/sys", filepath.Join(dir, "sys"))
	for _, sb := range []*Sandbox{
		{Write: []string{"/"}},
		{Write: []string{filepath.Join(dir, "root")}},
		{Write: []string{"/proc/sys/kernel"}},
		{Write: []string{filepath.Join(dir, "sys")}},
		{Write: []string{"/sys/kernel"}},
		{Write: []string{"/dev"}},
		{Read: []string{"/proc"}},
		{Read: []string{"/"}},
	} {
		p, err := Start(Spec{Command: "true", Env: testEnv(), Dir: dir, Supervise: true, Sandbox: sb})
		if err == nil {
			p.Close(0)
			t.Errorf("%+v: started", sb)
			continue
		}
		t.Logf("%v: %v", append(sb.Write, sb.Read...), err)
	}
}

// A sandboxed server sees its own processes alone: not the command line
// of another (a secret in an argument), not the host's sockets through
// /proc/1/net, and /proc/sys is read-only even to a root user.
func TestSandboxSeesOnlyItsOwnProcesses(t *testing.T) {
	requireSandbox(t)
	const secret = "--api-key=sk-planted-in-argv"
	other, err := Start(Spec{Command: "sh", Args: []string{"-c", "sleep 1000; :", secret}, Env: testEnv(), Supervise: true})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close(0)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	port := fmt.Sprintf(":%04X ", ln.Addr().(*net.TCPAddr).Port)
	// The control: the host's /proc shows both.
	within(t, 10*time.Second, "the other server's command line", func() {
		for {
			if b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", other.Pid())); strings.Contains(string(b), secret) {
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	})
	if b, _ := os.ReadFile("/proc/1/net/tcp"); !strings.Contains(string(b), port) {
		t.Fatalf("the host's /proc/1/net/tcp lacks the listener's port %q", port)
	}
	out, errs := runSandboxed(t, &Sandbox{}, "/", "sh", "-c",
		// (The script is in the output, as a command line: what it prints
		// to be found is spelt differently in it.)
		`cat /proc/[0-9]*/cmdline | tr '\0' ' '; echo; printf 'P%sIDS=%s\n' '' $(ls /proc | grep -c '^[0-9]'); cat /proc/1/net/tcp; `+
			`cat /proc/sys/kernel/hostname > /proc/sys/kernel/hostname && echo SYSCTL_$((6*7))`)
	t.Logf("sandboxed:\n%s\nstderr %q", out, errs)
	if strings.Contains(out, secret) {
		t.Errorf("the sandboxed server read another process's command line")
	}
	if strings.Contains(out, port) {
		t.Errorf("the sandboxed server saw the host's listener through /proc/1/net/tcp")
	}
	if strings.Contains(out, "SYSCTL_42") {
		t.Errorf("the sandboxed server wrote /proc/sys/kernel/hostname")
	}
	// Itself, sh and cat, the helper (pid 1), and what the shell forks.
	var pids int
	if i := strings.Index(out, "PIDS="); i >= 0 {
		fmt.Sscanf(out[i:], "PIDS=%d", &pids)
	}
	if pids == 0 || pids > 6 {
		t.Errorf("the sandbox's /proc lists %d processes", pids)
	}
}

// A package cache is a private copy: the server reads what the user's
// cache holds (warm), and what it writes, there or over a file the user's
// servers run, lands in the private directory, never in the user's.
func TestSandboxCacheIsAPrivateCopy(t *testing.T) {
	requireSandbox(t)
	home, err := os.MkdirTemp("/var/tmp", "sandbox-cache-home-")
	if err != nil {
		t.Skip(err)
	}
	t.Cleanup(func() { os.RemoveAll(home) })
	cache := filepath.Join(home, ".npm")
	pkg := filepath.Join(cache, "_npx", "abc", "node_modules", "srv", "index.js")
	os.MkdirAll(filepath.Dir(pkg), 0o755)
	os.WriteFile(pkg, []byte("console.log('genuine')\n"), 0o644)
	private := filepath.Join(home, ".switchboard", "sandbox", "npm")
	out, errs := runSandboxed(t, &Sandbox{Caches: []Cache{{Path: cache, Private: private}}}, "/", "sh", "-c",
		"cat "+pkg+"; echo 'pwned()' > "+pkg+" && echo overwrote; mkdir -p "+cache+"/_cacache && echo new > "+cache+"/_cacache/x && cat "+cache+"/_cacache/x")
	t.Logf("sandboxed:\n%s\nstderr %q", out, errs)
	if !strings.Contains(out, "genuine") {
		t.Errorf("the server did not see the user's cache: %q", out)
	}
	if b, _ := os.ReadFile(pkg); string(b) != "console.log('genuine')\n" {
		t.Errorf("the user's cached package now holds %q", b)
	}
	if _, err := os.Stat(filepath.Join(cache, "_cacache", "x")); err == nil {
		t.Errorf("the server wrote into the user's cache")
	}
	if !strings.Contains(out, "overwrote") || !strings.Contains(out, "new") {
		t.Errorf("the server could not write its own copy: %q", out)
	}
	if b, err := os.ReadFile(filepath.Join(private, "0", "upper", "_npx", "abc", "node_modules", "srv", "index.js")); err != nil || string(b) != "pwned()\n" {
		t.Errorf("the private copy: %q, %v", b, err)
	}
	// Its copy persists, and the next start sees it.
	out, _ = runSandboxed(t, &Sandbox{Caches: []Cache{{Path: cache, Private: private}}}, "/", "cat", filepath.Join(cache, "_cacache", "x"))
	if out != "new\n" {
		t.Errorf("the next start's copy: %q", out)
	}
}

// As pid 1 of its namespace the sandbox helper passes a SIGTERM on to the
// server (which, as pid 1 itself, would have ignored it), reports the
// server's own exit status, and keeps its stderr.
func TestSandboxInitForwardsAndReports(t *testing.T) {
	requireSandbox(t)
	p, err := Start(Spec{Command: "sh", Args: []string{"-c", `trap 'echo got-term >&2; exit 7' TERM; echo ready; while :; do sleep 0.05; done`},
		Env: testEnv(), Dir: "/", Supervise: true, Sandbox: &Sandbox{}})
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 6)
	io.ReadFull(p.Stdout(), buf)
	// What Close sends after its grace: SIGTERM to the group (the helper's).
	if err := p.signal(sigTerm); err != nil {
		t.Fatal(err)
	}
	within(t, 20*time.Second, "the server's exit after SIGTERM", func() { <-p.Done() })
	p.Close(0)
	var ee *ExitError
	if err := p.ExitErr(); !errors.As(err, &ee) || ee.ExitCode() != 7 {
		t.Errorf("exit: %v, want exit status 7 (its SIGTERM trap's)", err)
	}
	if tail := strings.Join(p.StderrTail(0), "\n"); !strings.Contains(tail, "got-term") {
		t.Errorf("stderr %q lacks the trap's line", tail)
	}
	p, err = Start(Spec{Command: "sh", Args: []string{"-c", "kill -KILL $$"}, Env: testEnv(), Dir: "/", Supervise: true, Sandbox: &Sandbox{}})
	if err != nil {
		t.Fatal(err)
	}
	<-p.Done()
	p.Close(0)
	if err := p.ExitErr(); !errors.As(err, &ee) || ee.Signal() != syscall.SIGKILL {
		t.Errorf("exit: %v, want signal: killed", err)
	}
}

// A /proc partly covered by other mounts (Docker masks /proc/kcore and the
// like with /dev/null) makes the kernel refuse the sandbox its own: that
// is said before any start.
func TestProcCovered(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"21 26 0:20 / /proc rw,relatime - proc proc rw\n26 1 254:0 / / rw - ext4 /dev/vda rw\n", ""},
		{"21 26 0:20 / /proc rw - proc proc rw\n30 21 0:40 / /proc/sys/fs/binfmt_misc rw - binfmt_misc binfmt_misc rw\n", ""},
		{"21 26 0:20 / /proc rw - proc proc rw\n40 21 0:5 /null /proc/kcore rw - devtmpfs udev rw\n", "/proc/kcore"},
	} {
		if got := procCovered(tt.in); got != tt.want {
			t.Errorf("procCovered(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// A sandboxed server has System V IPC of its own: it could attach (read
// and write) the shared memory segments, message queues and semaphores
// of every process of the user (other servers, the desktop's MIT-SHM
// buffers, a database's), which no path, pid or network namespace hides.
// The same probe unsandboxed reads the segment (the control).
func TestSandboxSeesNoOtherIPC(t *testing.T) {
	requireSandbox(t)
	bin := probeBinary(t)
	const secret = "planted-in-shared-memory"
	key := 0x5342_0000 | os.Getpid()&0xffff
	id, err := unix.SysvShmGet(key, 4096, unix.IPC_CREAT|unix.IPC_EXCL|0o600)
	if err != nil {
		t.Skipf("no System V shared memory here: %v", err)
	}
	t.Cleanup(func() { unix.SysvShmCtl(id, unix.IPC_RMID, nil) })
	b, err := unix.SysvShmAttach(id, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	copy(b, secret)
	defer unix.SysvShmDetach(b)
	hex := fmt.Sprintf("%x", key)
	p, err := Start(Spec{Command: bin, Args: []string{"ipc", hex}, Env: testEnv(), Dir: "/", Supervise: true})
	if err != nil {
		t.Fatal(err)
	}
	p.Stdin().Close()
	control, _ := io.ReadAll(p.Stdout())
	p.Close(time.Second)
	if string(control) != "shm ok "+secret+"\n" {
		t.Fatalf("unsandboxed, the probe says %q (the control must read the segment)", control)
	}
	out, errs := runSandboxed(t, &Sandbox{}, "/", bin, "ipc", hex)
	t.Logf("sandboxed: %q, stderr %q", out, errs)
	if strings.Contains(out, secret) || !strings.HasPrefix(out, "shm error: ") {
		t.Errorf("the sandboxed server attached the host's shared memory segment: %q", out)
	}
}

func init() { testRoles["keyring"] = runKeyringHost }

// runKeyringHost is a host whose session keyring holds the "user" key
// $PROC_TEST_KEY_DESC (its value is $PROC_TEST_KEY_VALUE), as a login's
// may (Kerberos tickets, a tool's stored secret): it joins a new session
// keyring, adds the key and executes itself again, so that every thread,
// the supervisor and the servers inherit it. Then it runs the probe's
// keyring mode ($PROC_TEST_PROBE) unsandboxed and sandboxed and prints
// "control: LINE" and "sandboxed: LINE".
func runKeyringHost() {
	if os.Getenv("PROC_TEST_KEY_JOINED") != "1" {
		runtime.LockOSThread()
		if _, _, e := unix.Syscall(unix.SYS_KEYCTL, unix.KEYCTL_JOIN_SESSION_KEYRING, 0, 0); e != 0 {
			fmt.Println("error joining a session keyring:", e)
			os.Exit(1)
		}
		if _, err := unix.AddKey("user", os.Getenv("PROC_TEST_KEY_DESC"), []byte(os.Getenv("PROC_TEST_KEY_VALUE")), unix.KEY_SPEC_SESSION_KEYRING); err != nil {
			fmt.Println("error adding the key:", err)
			os.Exit(1)
		}
		err := syscall.Exec(os.Args[0], os.Args, append(os.Environ(), "PROC_TEST_KEY_JOINED=1"))
		fmt.Println("error:", err)
		os.Exit(1)
	}
	for _, sb := range []*Sandbox{nil, {}} {
		p, err := Start(Spec{Command: os.Getenv("PROC_TEST_PROBE"), Args: []string{"keyring", os.Getenv("PROC_TEST_KEY_DESC")},
			Env: testEnv(), Dir: "/", Supervise: true, Sandbox: sb})
		if err != nil {
			fmt.Println("error", err)
			os.Exit(1)
		}
		p.Stdin().Close()
		out, _ := io.ReadAll(p.Stdout())
		p.Close(time.Second)
		name := "control"
		if sb != nil {
			name = "sandboxed"
		}
		fmt.Printf("%s: %s\n", name, strings.TrimSpace(string(out)))
	}
}

// A sandboxed server cannot read the kernel keyrings of whoever started
// the host: the session keyring it inherits (which a user namespace does
// not hide), nor, having joined a new one, the old one linked back in by
// the id /proc/keys shows. The same probe unsandboxed reads the key (the
// control).
func TestSandboxReadsNoKeyring(t *testing.T) {
	requireSandbox(t)
	bin := probeBinary(t)
	const secret = "planted-in-the-session-keyring"
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), "PROC_TEST_ROLE=keyring", "PROC_TEST_PROBE="+bin,
		"PROC_TEST_KEY_DESC=switchboard-test:"+strconv.Itoa(os.Getpid()), "PROC_TEST_KEY_VALUE="+secret)
	out, err := cmd.CombinedOutput()
	t.Logf("%s", out)
	if strings.Contains(string(out), "error adding the key") || strings.Contains(string(out), "error joining") {
		t.Skipf("no kernel keyrings here: %s", out)
	}
	if err != nil {
		t.Fatalf("the keyring host: %v", err)
	}
	if !strings.Contains(string(out), "control: key ok "+secret) {
		t.Fatalf("unsandboxed, the probe did not read the key (the control must)")
	}
	if !strings.Contains(string(out), "sandboxed: key error: ") || strings.Contains(string(out), "sandboxed: key ok") {
		t.Errorf("the sandboxed server read the session keyring's key")
	}
}
