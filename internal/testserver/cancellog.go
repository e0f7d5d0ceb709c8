package testserver

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func init() {
	register("cancel-log", serverDef{
		doc: "serves the echo tools; tool wait appends \"started\" to -cancel-file and blocks until the call is cancelled " +
			"(with {\"ignore_cancel\": true}, forever: then the process outlives stdin EOF until signalled); every " +
			"notifications/cancelled it receives is appended to -cancel-file (\"cancelled\" and its params as JSON) and written to stderr",
		setup: func(fs *flag.FlagSet, p *proc) func(context.Context) error {
			cfg := echoFlags(fs, p)
			file := fs.String("cancel-file", "", "file to append one line to per notifications/cancelled received")
			return func(ctx context.Context) error {
				s := newEchoServer("cancel-log", cfg, p)
				mcp.AddTool(s, &mcp.Tool{
					Name:        "wait",
					Description: "Blocks until the call is cancelled (or, with ignore_cancel, forever).",
				}, func(ctx context.Context, _ *mcp.CallToolRequest, in waitIn) (*mcp.CallToolResult, any, error) {
					fmt.Fprintln(p.errw, "cancel-log: wait called")
					appendLine(p, *file, "started")
					if in.IgnoreCancel {
						select {} // a hung tool, on purpose
					}
					<-ctx.Done()
					return nil, nil, ctx.Err()
				})
				s.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
					return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
						if method == "notifications/cancelled" {
							recordCancel(p, *file, req)
						}
						return next(ctx, method, req)
					}
				})
				return p.serve(ctx, s, p.in)
			}
		},
	})
}

type waitIn struct {
	IgnoreCancel bool `json:"ignore_cancel,omitempty" jsonschema:"block forever, ignoring cancellation"`
}

// recordCancel writes one line per cancellation: tests read the file to see
// that it arrived.
func recordCancel(p *proc, file string, req mcp.Request) {
	b, _ := json.Marshal(req.GetParams())
	fmt.Fprintf(p.errw, "cancel-log: notifications/cancelled %s\n", b)
	appendLine(p, file, "cancelled "+string(b))
}

func appendLine(p *proc, file, line string) {
	if file == "" {
		return
	}
	f, err := os.OpenFile(file, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		fmt.Fprintf(p.errw, "cancel-log: %v\n", err)
		return
	}
	defer f.Close()
	_, _ = f.WriteString(line + "\n")
}
