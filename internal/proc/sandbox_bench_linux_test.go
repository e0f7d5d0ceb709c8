package proc

import (
	"bufio"
	"io"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// BenchmarkStart measures a server's start-up under the supervisor, plain,
// sandboxed, and sandboxed with a network allow-list: Start, one line
// echoed back (the server runs), Close.
// The supervisor is started before the timer (once per host in real use).
//
//	go test ./internal/proc -run XXX -bench BenchmarkStart -count 3
func BenchmarkStart(b *testing.B) {
	if why := SandboxSupport(); why != "" {
		b.Skip(why)
	}
	warm, err := Start(Spec{Command: "cat", Env: testEnv(), Supervise: true})
	if err != nil {
		b.Fatal(err)
	}
	warm.Close(time.Second)
	dir := b.TempDir()
	for _, bc := range []struct {
		name string
		sb   *Sandbox
	}{{"plain", nil}, {"sandboxed", &Sandbox{Write: []string{dir}}},
		// The network forwarder too: the proxy's listener and a loopback
		// stand-in opened inside, handed to the supervisor.
		{"sandboxed-allow-list", &Sandbox{Write: []string{dir}, Allow: []string{"127.0.0.1:9", "example.com:443"}, AllowPrivate: true}}} {
		b.Run(bc.name, func(b *testing.B) {
			var rss, priv, n int
			for b.Loop() {
				p, err := Start(Spec{Command: "cat", Env: testEnv(), Dir: dir, Supervise: true, Sandbox: bc.sb})
				if err != nil {
					b.Fatal(err)
				}
				io.WriteString(p.Stdin(), "x\n")
				if _, err := bufio.NewReader(p.Stdout()).ReadString('\n'); err != nil {
					b.Fatal(err)
				}
				if bc.sb != nil { // the sandbox helper, which stays as the server's pid 1
					if kb := memKB(p.Pid(), "status", "VmRSS:"); kb > 0 {
						rss, n = rss+kb, n+1
						priv += memKB(p.Pid(), "smaps_rollup", "Private_Dirty:") + memKB(p.Pid(), "smaps_rollup", "Private_Clean:")
					}
				}
				p.Close(time.Second)
			}
			if n > 0 {
				b.ReportMetric(float64(rss)/float64(n), "helper-RSS-kB")
				b.ReportMetric(float64(priv)/float64(n), "helper-private-kB")
			}
		})
	}
}

// memKB is the figure (in kB) that the line starting with key gives in
// /proc/PID/file, 0 if none.
func memKB(pid int, file, key string) int {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/" + file)
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, key); ok {
			n, _ := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")))
			return n
		}
	}
	return 0
}
