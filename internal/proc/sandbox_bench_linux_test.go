package proc

import (
	"bufio"
	"io"
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
			for b.Loop() {
				p, err := Start(Spec{Command: "cat", Env: testEnv(), Dir: dir, Supervise: true, Sandbox: bc.sb})
				if err != nil {
					b.Fatal(err)
				}
				io.WriteString(p.Stdin(), "x\n")
				if _, err := bufio.NewReader(p.Stdout()).ReadString('\n'); err != nil {
					b.Fatal(err)
				}
				p.Close(time.Second)
			}
		})
	}
}
