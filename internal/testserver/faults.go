package testserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The fault servers misbehave the way real servers do. Most serve the echo
// server's tools (under their own name) apart from their one fault.

func init() {
	register("hang-init", serverDef{
		doc: "reads stdin but never answers anything (not even initialize); exits when stdin closes unless -ignore-eof",
		setup: func(fs *flag.FlagSet, p *proc) func(context.Context) error {
			ignoreEOF := fs.Bool("ignore-eof", false, "keep hanging after stdin closes, until killed")
			return func(ctx context.Context) error {
				_, _ = io.Copy(io.Discard, p.in)
				if *ignoreEOF {
					<-ctx.Done()
				}
				return nil
			}
		},
	})

	register("hang-call", serverDef{
		doc:       "serves the echo tools; tool hang never returns and ignores cancellation, so the process outlives stdin EOF until signalled",
		inProcess: true,
		setup: func(fs *flag.FlagSet, p *proc) func(context.Context) error {
			cfg := echoFlags(fs, p)
			p.build = func() *mcp.Server {
				s := newEchoServer("hang-call", cfg, p)
				mcp.AddTool(s, &mcp.Tool{
					Name:        "hang",
					Description: "Never returns, even when cancelled.",
				}, func(context.Context, *mcp.CallToolRequest, empty) (*mcp.CallToolResult, any, error) {
					fmt.Fprintln(p.errw, "hang-call: tool hang called; blocking forever")
					select {} // ignore ctx on purpose
				})
				return s
			}
			return p.buildAndServe
		},
	})

	register("crash-mid-call", serverDef{
		doc: "serves the echo tools; tool crash writes why to stderr and exits the process with status 3 while the call is in flight",
		setup: func(fs *flag.FlagSet, p *proc) func(context.Context) error {
			cfg := echoFlags(fs, p)
			code := fs.Int("code", 3, "exit status of the crash")
			p.build = func() *mcp.Server {
				s := newEchoServer("crash-mid-call", cfg, p)
				mcp.AddTool(s, &mcp.Tool{
					Name:        "crash",
					Description: "Crashes the server process while this call is in flight.",
				}, func(context.Context, *mcp.CallToolRequest, empty) (*mcp.CallToolResult, any, error) {
					fmt.Fprintf(p.errw, "crash-mid-call: panic: tool crash called, exiting with status %d mid-call\n", *code)
					os.Exit(*code)
					return nil, nil, nil
				})
				return s
			}
			return p.buildAndServe
		},
	})

	register("garbage", serverDef{
		doc: "answers initialize and tools/list normally; on the first tool call writes non-JSON garbage to stdout before its answer",
		setup: func(fs *flag.FlagSet, p *proc) func(context.Context) error {
			cfg := echoFlags(fs, p)
			every := fs.Bool("every", false, "write garbage before every tool call's answer, not only the first")
			return func(ctx context.Context) error {
				s := newEchoServer("garbage", cfg, p)
				var calls atomic.Int64
				s.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
					return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
						if method == "tools/call" && (calls.Add(1) == 1 || *every) {
							fmt.Fprintln(p.errw, "garbage: writing garbage to stdout")
							_, _ = p.out.Write([]byte("Debugger listening on ws://127.0.0.1:9229 \x00\xff{{{ not json\n"))
						}
						return next(ctx, method, req)
					}
				})
				return p.serve(ctx, s, p.in)
			}
		},
	})

	register("flood-stderr", serverDef{
		doc: "serves the echo tools while writing megabytes to stderr continuously; every request also logs a line to stderr synchronously, so a host that does not drain stderr sees calls stall",
		setup: func(fs *flag.FlagSet, p *proc) func(context.Context) error {
			cfg := echoFlags(fs, p)
			chunk := fs.Int("chunk", 64<<10, "bytes per write")
			interval := fs.Duration("interval", 10*time.Millisecond, "pause between writes")
			total := fs.Int64("total", 0, "stop flooding after this many bytes (0: never)")
			return func(ctx context.Context) error {
				ctx, cancel := context.WithCancel(ctx)
				defer cancel()
				go flood(ctx, p.errw, *chunk, *interval, *total)
				s := newEchoServer("flood-stderr", cfg, p)
				s.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
					return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
						fmt.Fprintf(p.errw, "flood-stderr: handling %s\n", method)
						return next(ctx, method, req)
					}
				})
				return p.serve(ctx, s, p.in)
			}
		},
	})

	register("exit-init", serverDef{
		doc: "prints 'fatal: cannot open database' to stderr and exits 1 before reading anything; " +
			"with -state FILE it counts its starts there",
		setup: func(fs *flag.FlagSet, p *proc) func(context.Context) error {
			code := fs.Int("code", 1, "exit status")
			msg := fs.String("message", "fatal: cannot open database", "the line written to stderr")
			state := fs.String("state", "", "file counting this server's starts")
			return func(context.Context) error {
				if *state != "" {
					if _, err := bumpCounter(*state); err != nil {
						return err
					}
				}
				fmt.Fprintln(p.errw, *msg)
				return exitError{code: *code}
			}
		},
	})

	register("flap", serverDef{
		doc: "serves the echo tools, then exits after -calls tool calls (after answering the last) or after -after; " +
			"with -state FILE and -times K only the first K lives flap, so a reconnect sees it come back for good",
		setup: func(fs *flag.FlagSet, p *proc) func(context.Context) error {
			cfg := echoFlags(fs, p)
			calls := fs.Int("calls", 0, "exit after answering this many tool calls (0: no limit)")
			after := fs.Duration("after", 0, "exit this long after starting (0: no limit)")
			code := fs.Int("code", 1, "exit status")
			state := fs.String("state", "", "file counting this server's lives (starts)")
			times := fs.Int("times", 0, "with -state, flap only in the first this many lives (0: every life)")
			return func(ctx context.Context) error {
				life := 1
				if *state != "" {
					n, err := bumpCounter(*state)
					if err != nil {
						return err
					}
					life = n
				}
				s := newEchoServer("flap", cfg, p)
				if *times > 0 && life > *times {
					fmt.Fprintf(p.errw, "flap: life %d: serving for good\n", life)
					return p.serve(ctx, s, p.in)
				}
				// Exit the way a crashing server does: at once, whatever is in
				// flight, so that nothing queued behind the last call is answered.
				die := func(why string) {
					fmt.Fprintf(p.errw, "flap: life %d: exiting %s\n", life, why)
					os.Exit(*code)
				}
				if *after > 0 {
					t := time.AfterFunc(*after, func() { die(fmt.Sprintf("after %v", *after)) })
					defer t.Stop()
				}
				if *calls > 0 {
					var n atomic.Int64
					s.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
						return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
							res, err := next(ctx, method, req)
							if method == "tools/call" && n.Add(1) == int64(*calls) {
								// Exit once the answer to this call is written.
								p.out.afterNextWrite(func() { die(fmt.Sprintf("after %d tool calls", *calls)) })
							}
							return res, err
						}
					})
				}
				return p.serve(ctx, s, p.in)
			}
		},
	})

	register("discover-kill", serverDef{
		doc: "exits (status 1) if the first message is not initialize, as servers that die on the 2026-07-28 " +
			"server/discover probe do (go-sdk #1177); serves the echo tools when the first message is initialize",
		setup: func(fs *flag.FlagSet, p *proc) func(context.Context) error {
			cfg := echoFlags(fs, p)
			code := fs.Int("code", 1, "exit status")
			return func(ctx context.Context) error {
				br := bufio.NewReader(p.in)
				first, err := br.ReadBytes('\n')
				if err != nil && len(first) == 0 {
					return nil // stdin closed before any message
				}
				var msg struct {
					Method string `json:"method"`
				}
				_ = json.Unmarshal(first, &msg)
				if msg.Method != "initialize" {
					return exitError{code: *code, msg: fmt.Sprintf(
						"discover-kill: Error: first message must be initialize, got %q; exiting", msg.Method)}
				}
				s := newEchoServer("discover-kill", cfg, p)
				return p.serve(ctx, s, io.MultiReader(bytes.NewReader(first), br))
			}
		},
	})

	register("slow-start", serverDef{
		doc: "sleeps -delay (or, with -until-file, waits until that file exists) before reading stdin, then serves the echo tools; " +
			"with -state FILE and -fast K its first K starts are not delayed (a server that is slow only to come back), with -slow K only " +
			"its first K starts are (one that missed its startup timeout once)",
		setup: func(fs *flag.FlagSet, p *proc) func(context.Context) error {
			cfg := echoFlags(fs, p)
			delay := fs.Duration("delay", 2*time.Second, "how long to wait before serving")
			until := fs.String("until-file", "", "instead of -delay, wait until this `file` exists (a test releases the server when it chooses)")
			state := fs.String("state", "", "file counting this server's starts")
			fast := fs.Int("fast", 0, "with -state, start at once in the first this many starts")
			slow := fs.Int("slow", 0, "with -state, wait -delay only in the first this many starts (0: in every start after -fast)")
			return func(ctx context.Context) error {
				if *state != "" {
					n, err := bumpCounter(*state)
					if err != nil {
						return err
					}
					if n <= *fast || (*slow > 0 && n > *slow) {
						*delay = 0
					}
				}
				if *until != "" {
					fmt.Fprintf(p.errw, "slow-start: starting once %s exists\n", *until)
					for {
						if _, err := os.Stat(*until); err == nil {
							break
						}
						select {
						case <-ctx.Done():
							return nil
						case <-time.After(20 * time.Millisecond):
						}
					}
				} else {
					fmt.Fprintf(p.errw, "slow-start: starting in %v\n", *delay)
					select {
					case <-ctx.Done():
						return nil
					case <-time.After(*delay):
					}
				}
				return p.serve(ctx, newEchoServer("slow-start", cfg, p), p.in)
			}
		},
	})

	register("ignore-stdin-eof", serverDef{
		doc: "serves the echo tools; when stdin closes keeps running until SIGTERM (exit 0), or with -ignore-sigterm until SIGKILL",
		setup: func(fs *flag.FlagSet, p *proc) func(context.Context) error {
			cfg := echoFlags(fs, p)
			ignoreTerm := fs.Bool("ignore-sigterm", false, "ignore SIGTERM too (and SIGINT): only SIGKILL ends it")
			return func(ctx context.Context) error {
				sigs := make(chan os.Signal, 1)
				if *ignoreTerm {
					signal.Ignore(syscall.SIGTERM, os.Interrupt)
				} else {
					signal.Notify(sigs, syscall.SIGTERM, os.Interrupt)
					defer signal.Stop(sigs)
				}
				err := p.serve(ctx, newEchoServer("ignore-stdin-eof", cfg, p), p.in)
				fmt.Fprintln(p.errw, "ignore-stdin-eof: stdin closed; still running")
				select {
				case <-ctx.Done():
				case sig := <-sigs:
					fmt.Fprintf(p.errw, "ignore-stdin-eof: got %v; exiting\n", sig)
				}
				return err
			}
		},
	})

	register("grandchild", serverDef{
		doc: "serves the echo tools after starting a grandchild process (a sleeper that holds the server's stderr and " +
			"lives until signalled) in the server's process group, like an npx or sh -c wrapper; tool grandchild_pid returns " +
			"its pid, -pid-file records both pids; the server exits on stdin EOF but the grandchild does not",
		setup: func(fs *flag.FlagSet, p *proc) func(context.Context) error {
			cfg := echoFlags(fs, p)
			return func(ctx context.Context) error {
				exe, args := Command("hang-init", "-ignore-eof")
				cmd := exec.Command(exe, args...)
				if f, ok := p.errw.w.(*os.File); ok {
					cmd.Stderr = f // hold the pipe, as a real grandchild does
				}
				if err := cmd.Start(); err != nil {
					return fmt.Errorf("grandchild: starting the grandchild: %w", err)
				}
				go func() { _ = cmd.Wait() }() // reap it if it dies while we live
				pid := cmd.Process.Pid
				if err := p.recordPID(pid); err != nil {
					return err
				}
				fmt.Fprintf(p.errw, "grandchild: started grandchild pid %d\n", pid)
				s := newEchoServer("grandchild", cfg, p)
				mcp.AddTool(s, &mcp.Tool{
					Name:        "grandchild_pid",
					Description: "Returns the pid of the grandchild process this server started.",
				}, func(context.Context, *mcp.CallToolRequest, empty) (*mcp.CallToolResult, any, error) {
					return text(strconv.Itoa(pid)), nil, nil
				})
				return p.serve(ctx, s, p.in)
			}
		},
	})

	register("list-error", serverDef{
		doc: "serves the echo tools, but answers the list requests named by -fail (comma-separated, default tools/list) " +
			"with a JSON-RPC internal error carrying -message; tool calls work",
		setup: func(fs *flag.FlagSet, p *proc) func(context.Context) error {
			cfg := echoFlags(fs, p)
			failing := fs.String("fail", "tools/list", "the list methods that fail, comma-separated")
			msg := fs.String("message", "backend unavailable: index not loaded", "the error message")
			return func(ctx context.Context) error {
				fail := map[string]bool{}
				for _, m := range strings.Split(*failing, ",") {
					fail[strings.TrimSpace(m)] = true
				}
				s := newEchoServer("list-error", cfg, p)
				s.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
					return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
						if fail[method] {
							fmt.Fprintf(p.errw, "list-error: failing %s\n", method)
							return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: *msg}
						}
						return next(ctx, method, req)
					}
				})
				return p.serve(ctx, s, p.in)
			}
		},
	})

	register("usage-exit", serverDef{
		doc: "writes an error line and then its usage text to stderr (as CLIs do for a missing option) and exits 2 " +
			"before reading stdin; with -error-last the error line comes after the usage, -options N makes the usage " +
			"text N option lines longer (as servers with many flags print), and -trailer adds a closing line",
		setup: func(fs *flag.FlagSet, p *proc) func(context.Context) error {
			msg := fs.String("message", "error: required option '--api-key <key>' not specified", "the error line")
			last := fs.Bool("error-last", false, "write the error line after the usage text")
			options := fs.Int("options", 0, "more option lines in the usage text")
			trailer := fs.String("trailer", "", "a last line after the usage text, e.g. cobra's `Use \"… --help\" for more information`")
			return func(context.Context) error {
				usage := "Usage: usage-exit [options]\n\nA test MCP server.\n\nOptions:\n  --api-key <key>  the API key to use\n  --port <port>    unused\n"
				for i := range *options {
					usage += fmt.Sprintf("  --option-%03d <value>  option number %d\n", i, i)
				}
				usage += "  -h, --help       display help for command\n"
				if *trailer != "" {
					usage += "\n" + *trailer + "\n"
				}
				if *last {
					fmt.Fprint(p.errw, usage)
					fmt.Fprintln(p.errw, *msg)
				} else {
					fmt.Fprintln(p.errw, *msg)
					fmt.Fprint(p.errw, usage)
				}
				return exitError{code: 2}
			}
		},
	})

	register("stdout-banner", serverDef{
		doc: "writes -line to stdout before reading anything (a banner a server meant for stderr), then serves the echo tools",
		setup: func(fs *flag.FlagSet, p *proc) func(context.Context) error {
			cfg := echoFlags(fs, p)
			line := fs.String("line", "Secure MCP Filesystem Server running on stdio", "the line written to stdout first")
			return func(ctx context.Context) error {
				fmt.Fprintln(p.out, *line)
				return p.serve(ctx, newEchoServer("stdout-banner", cfg, p), p.in)
			}
		},
	})

	register("many-tools", serverDef{
		doc:       "serves -n tools named tool_0001… (each echoes its text), to test big tool lists, token estimates and tool search",
		inProcess: true,
		setup: func(fs *flag.FlagSet, p *proc) func(context.Context) error {
			n := fs.Int("n", 100, "number of tools")
			descLen := fs.Int("desc-len", 0, "pad each description to at least this many characters")
			p.build = func() *mcp.Server { return newManyToolsServer(*n, *descLen) }
			return p.buildAndServe
		},
	})
}

var topics = []string{"weather", "calendar", "email", "files", "database", "search", "billing", "tickets", "deploys", "metrics"}

func newManyToolsServer(n, descLen int) *mcp.Server {
	s := mcp.NewServer(implementation("many-tools"), &mcp.ServerOptions{Capabilities: &mcp.ServerCapabilities{}})
	// One raw schema for all: inferring and resolving thousands of schemas
	// would make the server slow to start.
	schema := json.RawMessage(`{"type":"object","properties":{"text":{"type":"string","description":"the text to return"}}}`)
	for i := 1; i <= n; i++ {
		name := fmt.Sprintf("tool_%04d", i)
		topic := topics[i%len(topics)]
		desc := fmt.Sprintf("Tool %d of %d: looks up %s records. Returns its text argument prefixed with its name.", i, n, topic)
		for len(desc) < descLen {
			desc += " Lorem ipsum dolor sit amet, consectetur adipiscing elit."
		}
		s.AddTool(&mcp.Tool{Name: name, Description: desc, InputSchema: schema, Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
			func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				var in echoIn
				if len(req.Params.Arguments) > 0 {
					if err := json.Unmarshal(req.Params.Arguments, &in); err != nil {
						return errorResult(name + ": bad arguments: " + err.Error()), nil
					}
				}
				return text(name + ": " + in.Text), nil
			})
	}
	return s
}

// flood writes chunk-sized lines of filler to w until ctx ends or total bytes
// are written.
func flood(ctx context.Context, w io.Writer, chunk int, interval time.Duration, total int64) {
	if chunk < 2 {
		chunk = 2
	}
	pattern := []byte("flood-stderr: lorem ipsum dolor sit amet ")
	line := bytes.Repeat(pattern, chunk/len(pattern)+1)[:chunk-1]
	line = append(line, '\n')
	var written int64
	for ctx.Err() == nil && (total <= 0 || written < total) {
		n, err := w.Write(line)
		if err != nil {
			return
		}
		written += int64(n)
		if interval > 0 {
			select {
			case <-ctx.Done():
				return
			case <-time.After(interval):
			}
		}
	}
}

var counterMu sync.Mutex

// bumpCounter increments the decimal counter in file and returns the new
// value.
func bumpCounter(file string) (int, error) {
	counterMu.Lock()
	defer counterMu.Unlock()
	data, err := os.ReadFile(file)
	if err != nil && !os.IsNotExist(err) {
		return 0, err
	}
	n, _ := strconv.Atoi(strings.TrimSpace(string(data)))
	n++
	return n, os.WriteFile(file, []byte(strconv.Itoa(n)+"\n"), 0o644)
}
