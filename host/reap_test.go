//go:build linux

package host_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/testserver"
)

const hostUnderTest = "__host-under-test"

// maybeRunHost makes the test binary a host process for TestHostSIGKILL:
// it runs one server behind `sh -c '…; true'` (sh stays as a parent, the
// server is a grandchild) plus a background sleep, prints READY once the
// server answers, and waits to be killed.
func maybeRunHost() {
	if len(os.Args) < 2 || os.Args[1] != hostUnderTest {
		return
	}
	cmd, args := testserver.Command("echo")
	line := "sleep 1000 & " + shq(cmd)
	for _, a := range args {
		line += " " + shq(a)
	}
	line += "; true"
	def := config.Server{Type: config.TypeStdio, Command: "/bin/sh", Args: []string{"-c", line}}
	h := host.New(&config.Resolved{Servers: []config.ResolvedServer{{
		Name: "wrapped", Written: def, Effective: def, Scope: config.ScopeUser, Trust: config.TrustUser,
		Availability: config.Available,
	}}}, &host.Options{NoSupervisor: os.Getenv("SB_NO_SUPERVISOR") == "1"})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := h.Call(ctx, "mcp__wrapped__pid", map[string]any{})
	if err != nil {
		fmt.Println("ERROR", err)
		os.Exit(1)
	}
	fmt.Println("READY", textOf(res))
	select {}
}

// descendants lists every process below pid (from /proc).
func descendants(pid int) []int {
	children := map[int][]int{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		data, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		s := string(data)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+2:])
		if len(f) < 2 {
			continue
		}
		ppid, _ := strconv.Atoi(f[1])
		children[ppid] = append(children[ppid], p)
	}
	var out []int
	var walk func(int)
	walk = func(p int) {
		for _, c := range children[p] {
			out = append(out, c)
			walk(c)
		}
	}
	walk(pid)
	return out
}

// A host that is SIGKILLed leaves no server process and no grandchild.
func TestHostSIGKILLLeavesNoSurvivor(t *testing.T) {
	linuxOnly(t)
	for _, mode := range []string{"supervised", "direct"} {
		t.Run(mode, func(t *testing.T) {
			exe, err := os.Executable()
			if err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(exe, hostUnderTest)
			cmd.Env = os.Environ()
			if mode == "direct" {
				cmd.Env = append(cmd.Env, "SB_NO_SUPERVISOR=1")
			}
			cmd.Stderr = os.Stderr
			out, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer cmd.Process.Kill()
			lines := make(chan string, 1)
			go func() {
				sc := bufio.NewScanner(out)
				for sc.Scan() {
					lines <- sc.Text()
				}
				close(lines)
			}()
			var ready string
			select {
			case ready = <-lines:
			case <-time.After(30 * time.Second):
				t.Fatal("host under test did not get ready")
			}
			if !strings.HasPrefix(ready, "READY ") {
				t.Fatalf("host under test said %q", ready)
			}
			serverPid, _ := strconv.Atoi(strings.TrimPrefix(ready, "READY "))
			tree := descendants(cmd.Process.Pid)
			if !contains(tree, serverPid) || len(tree) < 3 {
				t.Fatalf("process tree %v does not hold the server %d, sh and sleep", tree, serverPid)
			}
			full := tree
			t.Cleanup(func() { // what a failed or direct-mode run leaves behind
				for _, p := range full {
					if alive(p) {
						_ = syscall.Kill(p, syscall.SIGKILL)
					}
				}
			})
			if mode == "direct" {
				// Without the supervisor only the parent-death signal of the
				// direct child is available: sh dies, and a grandchild that
				// ignores stdin EOF (the background sleep) may outlive the host.
				// That is why the supervisor is the default.
				tree = directChildren(cmd.Process.Pid)
			}
			if err := syscall.Kill(cmd.Process.Pid, syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			_ = cmd.Wait()
			deadline := time.Now().Add(10 * time.Second)
			for {
				var survivors []string
				for _, p := range tree {
					if alive(p) {
						survivors = append(survivors, fmt.Sprintf("%d(%s)", p, comm(p)))
					}
				}
				if len(survivors) == 0 {
					return
				}
				if time.Now().After(deadline) {
					for _, p := range tree {
						syscall.Kill(p, syscall.SIGKILL)
					}
					t.Fatalf("%s: after SIGKILL of the host, these survived: %v", mode, survivors)
				}
				time.Sleep(20 * time.Millisecond)
			}
		})
	}
}

func directChildren(pid int) []int {
	var out []int
	for _, p := range descendants(pid) {
		if ppid(p) == pid {
			out = append(out, p)
		}
	}
	return out
}

func ppid(pid int) int {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	f := strings.Fields(s[i+2:])
	n, _ := strconv.Atoi(f[1])
	return n
}

func comm(pid int) string {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
	return strings.TrimSpace(string(b))
}

func contains(xs []int, x int) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}

func countFDs(t *testing.T) int {
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	return len(entries)
}

// 100 connect/close cycles leak no goroutines, file descriptors or processes.
func TestConnectCloseCyclesLeakNothing(t *testing.T) {
	linuxOnly(t)
	cycles := 100
	if testing.Short() {
		cycles = 20
	}
	cycle := func() {
		h := host.New(cfgOf(stdio("echo", "echo")), &host.Options{CloseGrace: 500 * time.Millisecond,
			LookupEnv: func(string) (string, bool) { return "", false }})
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		if _, err := h.Call(ctx, "mcp__echo__echo", map[string]any{"text": "x"}); err != nil {
			t.Fatal(err)
		}
		h.Close()
	}
	cycle() // warm up lazily created runtime and SDK state
	time.Sleep(100 * time.Millisecond)
	g0, fd0, kids0 := runtime.NumGoroutine(), countFDs(t), len(descendants(os.Getpid()))
	for range cycles {
		cycle()
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		g, fd, kids := runtime.NumGoroutine(), countFDs(t), len(descendants(os.Getpid()))
		if g <= g0+2 && fd <= fd0 && kids <= kids0 {
			t.Logf("after %d cycles: goroutines %d→%d, fds %d→%d, child processes %d→%d", cycles, g0, g, fd0, fd, kids0, kids)
			return
		}
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			n := runtime.Stack(buf, true)
			t.Fatalf("after %d cycles: goroutines %d→%d, fds %d→%d, child processes %d→%d\n%s",
				cycles, g0, g, fd0, fd, kids0, kids, buf[:n])
		}
		time.Sleep(50 * time.Millisecond)
	}
}
