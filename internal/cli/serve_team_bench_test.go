package cli

import (
	"context"
	"net/http"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkGatewayHTTPTeam: 16 Go SDK clients call through one HTTP
// gateway at once, as BenchmarkGatewayHTTP16, with the team gateway's
// parts off (no credentials, no audit log; metrics are always counted)
// and on (every request authenticated by an API key of the auth file,
// principal rules, an audit line per call, /metrics scraped every
// second). calls/s is the throughput.
func BenchmarkGatewayHTTPTeam(b *testing.B) {
	for _, on := range []bool{false, true} {
		name := "off"
		if on {
			name = "on"
		}
		b.Run(name, func(b *testing.B) {
			w := benchWorld(b)
			args := []string{"--http", "127.0.0.1:0"}
			key := ""
			if on {
				key = w.addKey(b, "bench", "eng")
				args = append(args, "--audit-log", filepath.Join(w.dir, "audit.jsonl"))
			}
			base, stop := startHTTPGateway(b, w, args...)
			defer stop()
			hc := &http.Client{}
			if key != "" {
				hc.Transport = bearerTransport{token: key}
			}
			ctx := context.Background()
			var sessions []*mcp.ClientSession
			for range 16 {
				cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench"}, nil).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: base + "/mcp", HTTPClient: hc}, nil)
				if err != nil {
					b.Fatal(err)
				}
				defer cs.Close()
				sessions = append(sessions, cs)
			}
			scrape := make(chan struct{})
			if on {
				go func() {
					t := time.NewTicker(time.Second)
					defer t.Stop()
					for {
						select {
						case <-scrape:
							return
						case <-t.C:
							if resp, err := hc.Get(base + "/metrics"); err == nil {
								resp.Body.Close()
							}
						}
					}
				}()
			}
			defer close(scrape)
			params := &mcp.CallToolParams{Name: "alpha__echo", Arguments: map[string]any{"text": "ping"}}
			var (
				mu  sync.Mutex
				ds  []time.Duration
				wg  sync.WaitGroup
				bad error
			)
			next := make(chan struct{})
			b.ResetTimer()
			start := time.Now()
			for _, cs := range sessions {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for range next {
						t0 := time.Now()
						res, err := cs.CallTool(ctx, params)
						d := time.Since(t0)
						mu.Lock()
						ds = append(ds, d)
						if err == nil && res.IsError {
							err = errString(textOfResult(res))
						}
						if err != nil && bad == nil {
							bad = err
						}
						mu.Unlock()
					}
				}()
			}
			for i := 0; i < b.N; i++ {
				next <- struct{}{}
			}
			close(next)
			wg.Wait()
			elapsed := time.Since(start)
			b.StopTimer()
			if bad != nil {
				b.Fatal(bad)
			}
			b.ReportMetric(float64(b.N)/elapsed.Seconds(), "calls/s")
			reportLatency(b, ds)
		})
	}
}

type errString string

func (e errString) Error() string { return string(e) }

func textOfResult(res *mcp.CallToolResult) string {
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			return tc.Text
		}
	}
	return ""
}
