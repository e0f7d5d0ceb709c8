package proc

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// namedListener listens on 127.0.0.1 and answers each connection with
// its name: a line to a line, an HTTP response to a GET.
func namedListener(t *testing.T, name string) string {
	t.Helper()
	return namedListenerOn(t, "127.0.0.1:0", name)
}

// namedListenerOn is namedListener listening on addr.
func namedListenerOn(t *testing.T, addr, name string) string {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				br := bufio.NewReader(c)
				line, err := br.ReadString('\n')
				if err != nil {
					return
				}
				if !strings.HasPrefix(line, "GET ") {
					fmt.Fprintf(c, "%s\n", name)
					return
				}
				for {
					l, err := br.ReadString('\n')
					if err != nil || strings.TrimSpace(l) == "" {
						break
					}
				}
				fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s", len(name), name)
			}()
		}
	}()
	return ln.Addr().String()
}

// netProbe runs the probe's net mode on addrs under sb (nil:
// unsandboxed) and returns its lines by "WAY ADDR".
func netProbe(t *testing.T, bin string, sb *Sandbox, addrs ...string) map[string]string {
	t.Helper()
	ws := t.TempDir()
	if sb != nil {
		sb.Write = append(sb.Write, ws)
	}
	out, errs := runSandboxed(t, sb, ws, bin, append([]string{"net"}, addrs...)...)
	got := map[string]string{}
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		f := strings.SplitN(l, " ", 3)
		if len(f) == 3 {
			got[f[0]+" "+f[1]] = f[2]
		}
	}
	if len(got) != 3*len(addrs) {
		t.Fatalf("probe output %q, stderr %q", out, errs)
	}
	return got
}

// A sandbox with a network allow-list reaches the listed loopback
// listener of the host three ways (a plain connect to its address, which
// the sandbox forwards; CONNECT through the proxy; an absolute-form GET
// through it), and an unlisted one none: direct, the connection is
// refused, since nothing listens at that address in its network; through
// the proxy, 403. Every refused attempt is an error, none a hang (the
// probe bounds each). Unsandboxed, both listeners answer (the control).
func TestSandboxNetworkAllowList(t *testing.T) {
	requireSandbox(t)
	bin := probeBinary(t)
	listed, other := namedListener(t, "listed"), namedListener(t, "other")

	control := netProbe(t, bin, nil, listed, other)
	for _, a := range []string{listed, other} {
		if got, want := control["direct "+a], "ok "+map[string]string{listed: "listed", other: "other"}[a]; got != want {
			t.Errorf("unsandboxed, direct %s: %q, want %q (the control must succeed)", a, got, want)
		}
	}

	// 127.0.0.1:1 too, whose stand-in below port 1024 the helper can
	// open only with the capability it keeps for that (also as nobody).
	boxed := netProbe(t, bin, &Sandbox{Allow: []string{listed, "127.0.0.1:1"}, AllowPrivate: true}, listed, other)
	t.Logf("sandboxed: %q", boxed)
	for _, way := range []string{"direct", "connect", "get"} {
		if got := boxed[way+" "+listed]; got != "ok listed" {
			t.Errorf("sandboxed, %s to the listed %s: %q, want ok listed", way, listed, got)
		}
		got := boxed[way+" "+other]
		if !strings.HasPrefix(got, "error: ") || strings.Contains(got, "timeout") {
			t.Errorf("sandboxed, %s to the unlisted %s: %q, want an error, not a hang", way, other, got)
		}
	}
	if got := boxed["direct "+other]; !strings.Contains(got, "connection refused") {
		t.Errorf("direct to the unlisted %s: %q, want connection refused", other, got)
	}
	for _, way := range []string{"connect", "get"} {
		if got := boxed[way+" "+other]; !strings.Contains(got, "403") || !strings.Contains(got, "allow-list") {
			t.Errorf("%s to the unlisted %s: %q, want the proxy's 403 naming the allow-list", way, other, got)
		}
	}
}

// Without AllowPrivate (a project-scope server the user's settings do
// not let reach private addresses) a listed loopback destination is
// refused all the same, with netguard's reason; and a name is resolved
// outside, by the supervisor: "localhost:PORT" listed reaches the
// host's listener when private addresses are allowed (also when
// 127.0.0.1:PORT is listed too, which shares its stand-in inside).
func TestSandboxNetworkPolicy(t *testing.T) {
	requireSandbox(t)
	bin := probeBinary(t)
	listed := namedListener(t, "listed")

	project := netProbe(t, bin, &Sandbox{Allow: []string{listed}}, listed)
	t.Logf("project policy: %q", project)
	if got := project["direct "+listed]; !strings.Contains(got, "connection refused") {
		t.Errorf("direct, private refused: %q, want connection refused", got)
	}
	if got := project["connect "+listed]; !strings.Contains(got, "403") || !strings.Contains(got, "loopback") {
		t.Errorf("CONNECT, private refused: %q, want 403 naming loopback", got)
	}

	_, port, _ := net.SplitHostPort(listed)
	name := "localhost:" + port
	// Listed twice over, by name and by address: one stand-in inside.
	named := netProbe(t, bin, &Sandbox{Allow: []string{name, listed}, AllowPrivate: true}, name)
	t.Logf("by name: %q", named)
	for _, way := range []string{"direct", "connect", "get"} {
		if got := named[way+" "+name]; got != "ok listed" {
			t.Errorf("%s to %s: %q, want ok listed", way, name, got)
		}
	}
}

// supervisorSockets counts the sockets the supervisor holds.
func supervisorSockets(t *testing.T) int {
	t.Helper()
	pid := supervisorPid()
	if pid == 0 {
		t.Fatal("no supervisor")
	}
	dir := "/proc/" + strconv.Itoa(pid) + "/fd"
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range ents {
		if l, err := os.Readlink(dir + "/" + e.Name()); err == nil && strings.HasPrefix(l, "socket:") {
			n++
		}
	}
	return n
}

// The forwarder lasts as long as its server: while it runs the
// supervisor holds its listeners (in the server's network namespace,
// which they keep alive), and once the server is gone it holds none.
func TestSandboxNetworkForwarderEnds(t *testing.T) {
	requireSandbox(t)
	warm, err := Start(Spec{Command: "cat", Env: testEnv(), Supervise: true})
	if err != nil {
		t.Fatal(err)
	}
	defer warm.Close(time.Second)
	before := supervisorSockets(t)
	dir := t.TempDir()
	// The server lists its descriptors, then says "ready": the helper
	// sent its listeners before the exec, and the server holds none of
	// them, nor the socket they went over.
	p, err := Start(Spec{Command: "sh", Args: []string{"-c", "ls -l /proc/$$/fd; echo ready; exec cat"}, Env: testEnv(), Dir: dir, Supervise: true,
		Sandbox: &Sandbox{Write: []string{dir}, Allow: []string{"127.0.0.1:9", "example.com:443"}, AllowPrivate: true}})
	if err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(p.Stdout())
	var fds []string
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatalf("the sandboxed server said %q, %v", fds, err)
		}
		if line == "ready\n" {
			break
		}
		fds = append(fds, strings.TrimSpace(line))
	}
	t.Logf("the server's descriptors: %q", fds)
	if len(fds) < 2 {
		t.Fatalf("no descriptors listed: %q", fds)
	}
	for _, l := range fds {
		if strings.Contains(l, "socket:") {
			t.Errorf("the sandboxed server holds a socket: %s", l)
		}
	}
	// The listeners arrive at the supervisor asynchronously; wait for them.
	var during int
	within(t, 10*time.Second, "the forwarder's listeners", func() {
		for during = supervisorSockets(t); during < before+2; during = supervisorSockets(t) {
			time.Sleep(10 * time.Millisecond)
		}
	})
	p.Close(time.Second)
	within(t, 10*time.Second, "the forwarder's end", func() {
		for supervisorSockets(t) > before {
			time.Sleep(10 * time.Millisecond)
		}
	})
	t.Logf("supervisor sockets: %d before, %d with the forwarder, %d after", before, during, supervisorSockets(t))
}

// startTinyproxy starts Debian's tinyproxy on loopback for the test and
// returns its URL and its log file. Without tinyproxy the test is
// skipped, or fails under CI=true (.ci/run installs it).
func startTinyproxy(t *testing.T) (string, string) {
	t.Helper()
	bin, err := exec.LookPath("tinyproxy")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("no tinyproxy on this CI machine (.ci/run installs it): %v", err)
		}
		t.Skipf("no tinyproxy: %v", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	dir := t.TempDir()
	logFile := filepath.Join(dir, "tinyproxy.log")
	conf := filepath.Join(dir, "tinyproxy.conf")
	os.WriteFile(conf, []byte(fmt.Sprintf("Port %d\nListen 127.0.0.1\nTimeout 30\nLogFile %q\nLogLevel Connect\nMaxClients 20\nAllow 127.0.0.1\nDisableViaHeader Yes\n", port, logFile)), 0o644)
	cmd := exec.Command(bin, "-d", "-c", conf)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	within(t, 20*time.Second, "tinyproxy's start", func() {
		for {
			if c, err := net.Dial("tcp", addr); err == nil {
				c.Close()
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
	})
	return "http://" + addr, logFile
}

// With the user's own proxy (their HTTPS_PROXY), the relay reaches a
// listed destination through it, as every program of the user's does: a
// CONNECT, and an absolute-form GET, both through Debian's tinyproxy,
// which logs them; an unlisted destination is refused before the proxy
// is asked. The destination is not on loopback (loopback is always
// reached directly): a listener on this machine's own address.
func TestSandboxNetworkThroughTheUsersProxy(t *testing.T) {
	requireSandbox(t)
	bin := probeBinary(t)
	proxyURL, logFile := startTinyproxy(t)
	var ip net.IP
	if addrs, err := net.InterfaceAddrs(); err == nil {
		for _, a := range addrs {
			if n, ok := a.(*net.IPNet); ok && n.IP.To4() != nil && !n.IP.IsLoopback() && !n.IP.IsLinkLocalUnicast() {
				ip = n.IP
				break
			}
		}
	}
	if ip == nil {
		t.Skip("no address of this machine but loopback")
	}
	listed := namedListenerOn(t, net.JoinHostPort(ip.String(), "0"), "behind-the-proxy")
	other := namedListener(t, "other")
	boxed := netProbe(t, bin, &Sandbox{Allow: []string{listed}, AllowPrivate: true,
		Proxy: &ProxyConfig{HTTPSProxy: proxyURL, HTTPProxy: proxyURL}}, listed, other)
	t.Logf("sandboxed: %q", boxed)
	for _, way := range []string{"connect", "get"} {
		if got := boxed[way+" "+listed]; got != "ok behind-the-proxy" {
			t.Errorf("%s to the listed %s: %q, want it through the proxy", way, listed, got)
		}
		if got := boxed[way+" "+other]; !strings.Contains(got, "403") {
			t.Errorf("%s to the unlisted %s: %q, want 403", way, other, got)
		}
	}
	b, _ := os.ReadFile(logFile)
	if !strings.Contains(string(b), listed) || strings.Contains(string(b), other) {
		t.Errorf("tinyproxy's log:\n%s\nwant the listed destination alone", b)
	}
}
