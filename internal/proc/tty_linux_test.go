package proc

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func init() { testRoles["tty"] = runTTYHost }

// ttyProbe says whether /dev/tty opens: the controlling terminal, into
// which a process that opens it can push keystrokes (TIOCSTI) or read
// what the user types.
const ttyProbe = `if (: <>/dev/tty) 2>/dev/null; then echo opened; else echo refused; fi`

// runTTYHost is a host whose controlling terminal is its stdin (a
// terminal the test made): it opens /dev/tty itself, then runs ttyProbe
// as a server started directly (in its session, the control) and as a
// sandboxed one, and prints "host: …", "direct: …" and "sandboxed: …".
func runTTYHost() {
	f, err := os.OpenFile("/dev/tty", os.O_RDWR, 0)
	if err != nil {
		fmt.Println("host:", err)
		os.Exit(1)
	}
	f.Close()
	fmt.Println("host: opened")
	for _, sup := range []bool{false, true} {
		var sb *Sandbox
		name := "direct"
		if sup {
			sb, name = &Sandbox{}, "sandboxed"
		}
		p, err := Start(Spec{Command: "sh", Args: []string{"-c", ttyProbe}, Env: testEnv(), Dir: "/", Supervise: sup, Sandbox: sb})
		if err != nil {
			fmt.Println("error", err)
			os.Exit(1)
		}
		p.Stdin().Close()
		out, _ := io.ReadAll(p.Stdout())
		p.Close(time.Second)
		fmt.Printf("%s: %s\n", name, strings.TrimSpace(string(out)))
	}
}

// A sandboxed server has no controlling terminal, even when the host
// runs in one (as a gateway an agent in a terminal started does): it
// cannot open /dev/tty, which every sandbox shows, to push keystrokes
// into the user's shell or agent with TIOCSTI, or to read what is typed.
// A server the host starts itself, in its session, does (the control).
func TestSandboxHasNoTerminal(t *testing.T) {
	requireSandbox(t)
	ptmx, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no terminals to make here: %v", err)
	}
	defer ptmx.Close()
	if err := unix.IoctlSetPointerInt(int(ptmx.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetInt(int(ptmx.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	pts, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer pts.Close()
	go io.Copy(io.Discard, ptmx) // what is echoed there
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), "PROC_TEST_ROLE=tty")
	cmd.Stdin = pts
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	out, err := cmd.Output()
	t.Logf("%s", out)
	if err != nil {
		t.Fatalf("the host in a terminal: %v", err)
	}
	if !strings.Contains(string(out), "host: opened") || !strings.Contains(string(out), "direct: opened") {
		t.Fatalf("the host, or a server it started directly, did not open its terminal (the control must)")
	}
	if !strings.Contains(string(out), "sandboxed: refused") {
		t.Errorf("a sandboxed server opened the host's controlling terminal")
	}
}
