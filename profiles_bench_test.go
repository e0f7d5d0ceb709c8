package switchboard_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard"
	"github.com/switchboard-mcp/switchboard/gateway"
	"github.com/switchboard-mcp/switchboard/toolsurface/shape"
)

// treeRSS is the resident memory of this process and of every process
// whose environment carries SB_VIEW_TEST=marker-* (the servers and their
// supervisors), in bytes; 0 off Linux.
func treeRSS(t testing.TB, marker string) int64 {
	if runtime.GOOS != "linux" {
		return 0
	}
	total := rssOf("self")
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		env, err := os.ReadFile("/proc/" + e.Name() + "/environ")
		if err != nil || !bytes.Contains(env, []byte("SB_VIEW_TEST="+marker+"-")) {
			continue
		}
		total += rssOf(e.Name())
	}
	return total
}

// rssOf is VmRSS of /proc/pid/status, in bytes.
func rssOf(pid string) int64 {
	b, _ := os.ReadFile("/proc/" + pid + "/status")
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "VmRSS:" {
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			return kb * 1024
		}
	}
	return 0
}

// BenchmarkProfiles measures issue 34's target: twenty servers served
// through five profiles (five views, each with its own gateway, as serve
// --all-profiles builds them) against one profile. Each iteration opens
// the twenty echo servers, makes the views and their gateways, and lists
// every view's tools once (start-up; views-ns is the part after every
// server is ready: making the views and gateways, and their first
// lists); heap-B is the Go heap in use after
// that (after a GC), procs the server processes that run, rss-B the
// resident memory of this process and every server's (supervisors
// included). Run:
//
//	go test -run '^$' -bench BenchmarkProfiles -benchtime 3x .
func BenchmarkProfiles(b *testing.B) {
	var names []string
	for i := range 20 {
		names = append(names, fmt.Sprintf("s%02d", i))
	}
	for _, c := range []struct {
		n        int
		gateways bool
	}{{1, true}, {5, true}, {5, false}} {
		n := c.n
		b.Run(fmt.Sprintf("profiles=%d/gateways=%v", n, c.gateways), func(b *testing.B) {
			profiles := map[string]any{}
			for p := range n {
				// Each profile a different slice of the servers: 8 of 20.
				var servers []string
				for i := range 8 {
					servers = append(servers, names[(p*4+i)%20])
				}
				profiles[fmt.Sprintf("p%d", p)] = map[string]any{"servers": servers, "disabledTools": []string{"slow"}}
			}
			marker := fmt.Sprintf("bench%d%v", n, c.gateways)
			dir, home := profileHome(b, marker, map[string]any{"profiles": profiles}, names...)
			var heap, procs, rss, views float64
			b.ResetTimer()
			for range b.N {
				ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
				sb, err := switchboard.Open(ctx, switchboard.Options{Home: home, HomeDir: dir, ManagedDir: filepath.Join(dir, "managed"),
					LookupEnv: func(string) (string, bool) { return "", false }})
				if err != nil {
					b.Fatal(err)
				}
				sb.Ready(ctx)
				ready := time.Now()
				var gws []*gateway.Gateway
				for p := range n {
					v, err := sb.View(fmt.Sprintf("p%d", p))
					if err != nil {
						b.Fatal(err)
					}
					if c.gateways {
						gws = append(gws, gateway.New(v, nil))
					}
					if _, err := v.Tools(ctx, shape.Anthropic); err != nil {
						b.Fatal(err)
					}
				}
				b.StopTimer()
				views += float64(time.Since(ready))
				runtime.GC()
				var ms runtime.MemStats
				runtime.ReadMemStats(&ms)
				heap += float64(ms.HeapInuse)
				count := 0
				for _, s := range names {
					count += max(serverProcesses(b, marker+"-"+s), 0)
				}
				procs += float64(count)
				rss += float64(treeRSS(b, marker))
				for _, g := range gws {
					g.Close()
				}
				sb.Close()
				cancel()
				b.StartTimer()
			}
			b.ReportMetric(heap/float64(b.N), "heap-B")
			b.ReportMetric(procs/float64(b.N), "procs")
			b.ReportMetric(rss/float64(b.N), "rss-B")
			b.ReportMetric(views/float64(b.N), "views-ns")
		})
	}
}
