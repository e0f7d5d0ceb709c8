package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"runtime/debug"
	"runtime/pprof"
	"slices"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// sdkProxyArg makes this program the gateway scenario's floor: the
// smallest aggregating gateway the official Go SDK makes, on Streamable
// HTTP at an address, over the stdio servers of an mcpServers file.
//
// It connects to every server (over the SDK's CommandTransport, variant
// "sdk", or over internal/jsonl, variant "jsonl", the transport
// switchboard serve speaks to its stdio servers), lists their tools and
// serves each as <server>__<tool> behind the SDK's stateful Streamable HTTP
// handler; a call is forwarded with ClientSession.CallTool and its result
// returned as is. No policy, no envelope, no timeout, no supervisor, no
// configuration loading: what is left of `serve --http` once everything
// Switchboard does is taken away, so that switchboard ÷ this is what
// Switchboard's own code costs, and this ÷ TBXark's is what building on the
// Go SDK costs.
//
// It takes serve --http's runtime setting (GOGC=200; a GOGC in the
// environment wins), so that the difference is code, not settings.
const sdkProxyArg = "__bench-sdk-http-proxy" // then "sdk", "jsonl" or "relay" (relayfloor.go), the address, an mcpServers JSON file

func runSDKProxy(variant, addr, file string) error {
	if variant != "sdk" && variant != "jsonl" && variant != "relay" {
		return fmt.Errorf("unknown proxy variant %q (sdk, jsonl or relay)", variant)
	}
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(200)
	}
	servers, err := readServers(file)
	if err != nil {
		return err
	}
	ctx := context.Background()
	cctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	srv := mcp.NewServer(&mcp.Implementation{Name: "bench-sdk-http-proxy", Version: "v0"}, nil)
	names := make([]string, 0, len(servers))
	for name := range servers {
		names = append(names, name)
	}
	slices.Sort(names)
	routes := map[string]relayRoute{} // variant relay: the tools its middleware answers
	// One after another: start-up is not what this floor is for, and 100
	// servers at once on two cores only make the launch noisier.
	for _, name := range names {
		s := servers[name]
		cmd := exec.Command(s.Command, s.Args...)
		cmd.Stderr = os.Stderr
		var upstream mcp.Transport
		var up *relayUpstream
		var wait func()
		var sopts *mcp.ClientSessionOptions
		if variant == "relay" {
			upstream, up, wait, err = relayUpstreamOf(cmd)
			sopts = &mcp.ClientSessionOptions{ProtocolVersion: relayProtocol}
		} else {
			upstream, wait, err = floorUpstream(variant, cmd)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		defer wait()
		cs, err := floorClient().Connect(cctx, upstream, sopts)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		defer cs.Close()
		n := 0
		for tool, err := range cs.Tools(cctx, nil) {
			if err != nil {
				return fmt.Errorf("%s: tools/list: %w", name, err)
			}
			upstreamName := tool.Name
			served := *tool
			served.Name = name + "__" + upstreamName
			forward := cs
			if up != nil {
				forward = nil // the middleware answers: a call that reaches the tool fails
			}
			if err := addForwarded(srv, forward, &served, upstreamName); err != nil {
				fmt.Fprintln(os.Stderr, "bench floor: skipping tool:", err)
				continue
			}
			if up != nil {
				routes[served.Name] = relayRoute{up: up, tool: upstreamName}
			}
			n++
		}
		if n == 0 {
			return fmt.Errorf("%s lists no tool the SDK will serve", name)
		}
	}
	if variant == "relay" {
		srv.AddReceivingMiddleware(relayMiddleware(routes))
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	if file := os.Getenv(cpuProfileEnv); file != "" {
		// As switchboard's: a CPU profile until SIGTERM or SIGINT, so that
		// the two can be compared function by function.
		stop, err := startCPUProfile(file)
		if err != nil {
			return err
		}
		defer stop()
		go func() { _ = http.Serve(ln, h) }()
		sig := make(chan os.Signal, 1)
		signal.Notify(sig, syscall.SIGTERM, os.Interrupt)
		<-sig
		return nil
	}
	return http.Serve(ln, h)
}

// errProxyUsage is the hidden mode's usage line.
var errProxyUsage = errors.New("usage: " + sdkProxyArg + " sdk|jsonl|relay address mcpServers-file")

// cpuProfileEnv is switchboard's (internal/cli.CPUProfileEnv), spelt out:
// importing the CLI would link it into this program, whose binary size is
// part of the floor's RSS.
const cpuProfileEnv = "SWITCHBOARD_CPUPROFILE"

// startCPUProfile profiles this process into file until stop.
func startCPUProfile(file string) (stop func(), err error) {
	f, err := os.Create(file)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}
