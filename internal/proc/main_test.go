package proc

import (
	"bufio"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"testing"
)

// TestMain lets the test binary play the supervisor and, when
// PROC_TEST_ROLE=host, a host that starts one server and waits to be killed.
func TestMain(m *testing.M) {
	testHooks = true // see slowSpawnForTests
	MaybeRunSupervisor()
	if os.Getenv("PROC_TEST_ROLE") == "threadread" {
		runThreadRead()
		return
	}
	if role := testRoles[os.Getenv("PROC_TEST_ROLE")]; role != nil {
		role()
		return
	}
	if os.Getenv("PROC_TEST_ROLE") == "host" {
		forceIndirect = os.Getenv("PROC_TEST_INDIRECT") == "1"
		runTestHost()
		return
	}
	os.Exit(m.Run())
}

// testRoles are more roles of the test binary, by PROC_TEST_ROLE, that
// tests of one system add.
var testRoles = map[string]func(){}

// runTestHost starts `sh -c $PROC_TEST_SCRIPT` ($PROC_TEST_SERVERS times,
// default once), prints "ready PID" (of the first) and blocks until killed.
func runTestHost() {
	n, _ := strconv.Atoi(os.Getenv("PROC_TEST_SERVERS"))
	first := 0
	var sb *Sandbox
	if v := os.Getenv("PROC_TEST_SANDBOX"); v == "1" || v == "allow" {
		wd, _ := os.Getwd() // the servers' directory
		sb = &Sandbox{Read: []string{wd}}
		if v == "allow" { // a forwarder too, with a loopback listener at a listed address inside
			sb.Allow, sb.AllowPrivate = []string{"127.0.0.1:9", "example.com:443"}, true
		}
	}
	for range max(n, 1) {
		p, err := Start(Spec{
			Command:   "sh",
			Args:      []string{"-c", os.Getenv("PROC_TEST_SCRIPT")},
			Env:       testEnv(),
			Supervise: os.Getenv("PROC_TEST_SUPERVISE") == "1",
			Sandbox:   sb,
		})
		if err != nil {
			fmt.Println("error", err)
			os.Exit(1)
		}
		if first == 0 {
			first = p.Pid()
		}
	}
	fmt.Println("ready", first)
	if d := os.Getenv("PROC_TEST_SLOW_SPAWN"); d != "" { // one more server, whose fork hangs
		go Start(Spec{Command: "sh", Args: []string{"-c", "exec sleep 1000"},
			Env: append(testEnv(), slowSpawnEnv+"="+d), Supervise: true})
	}
	if os.Getenv("PROC_TEST_SECOND") == "1" { // one more server once the test says so
		bufio.NewReader(os.Stdin).ReadString('\n')
		go func() {
			p, err := Start(Spec{Command: "sh", Args: []string{"-c", "exec sleep 1000"}, Env: testEnv(), Supervise: true})
			if err != nil {
				fmt.Println("second error", err)
			} else {
				fmt.Println("second", p.Pid())
			}
		}()
	}
	bufio.NewReader(os.Stdin).ReadString('\n') // the test never writes
	select {}
}

// testEnv is the servers' environment. The supervisor is this test binary:
// under -race it would sleep a second at every exit without GORACE.
func testEnv() []string {
	return []string{"PATH=" + os.Getenv("PATH"), "GORACE=atexit_sleep_ms=0"}
}

// runThreadRead reads $PROC_TEST_FILE on a thread other than the main
// one, which waits on a channel, as a Node server's libuv pool or a Python
// worker thread reads a file: a SIGKILL ends the main thread at once, and
// a read the kernel holds keeps the process from ending.
func runThreadRead() {
	runtime.LockOSThread() // main stays on the leader thread; the read cannot run there
	done := make(chan struct{})
	go func() {
		os.ReadFile(os.Getenv("PROC_TEST_FILE"))
		close(done)
	}()
	<-done
	os.Exit(0)
}
