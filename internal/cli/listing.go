package cli

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/termsafe"
)

// startListing is the prologue of the listing commands (tools, prompts,
// resources): it loads the configuration, starts the servers they need (the
// one named by server, or all when server is ""), waits for them with
// progress (bounded by --wait), and returns the session with a context that
// bounds the listing itself. The caller closes the session and calls cancel.
func startListing(ctx context.Context, o *runtimeOptions, server string) (*session, context.Context, context.CancelFunc, error) {
	cfg, err := o.Config()
	if err != nil {
		return nil, nil, nil, err
	}
	var keep func(config.ResolvedServer) bool
	if server != "" {
		if cfg.Server(server) == nil {
			return nil, nil, nil, unknownServer(o.IO.ErrOut, cfg, server)
		}
		keep = serverOnly(server)
	}
	s, err := startSessionWith(ctx, o, cfg, keep)
	if err != nil {
		return nil, nil, nil, err
	}
	s.reading = true
	if !s.wait(ctx, o.Wait) {
		s.waitForRunners(ctx)
	}
	lctx, cancel := context.WithTimeout(ctx, max(o.Wait, 2*time.Second))
	return s, lctx, cancel, nil
}

// waitForRunners goes on waiting, after the default --wait ran out and
// with a person at the terminal, when every server still connecting is
// run by a package runner (npx, uvx…): it is most likely downloading its
// package on a first run, which takes longer than the default wait, and
// the person who asked (tools, prompts, resources, doctor) would otherwise
// be sent to run it again with --wait 120s. It says so once, then waits
// as `call` does (the servers' own startup timeouts bound it; Ctrl-C
// stops it). A server that is not a runner's and still connecting (a hung
// one) is not waited for longer: the answer says it is still connecting.
func (s *session) waitForRunners(ctx context.Context) {
	if ctx.Err() != nil || !s.opts.IO.CanPrompt || s.opts.Wait != DefaultWait {
		return
	}
	var runners []string
	for _, st := range s.h.Status() {
		if st.State != host.StateConnecting {
			continue
		}
		rs := s.cfg.Server(st.Name)
		if rs == nil {
			return
		}
		runner := packageRunner(rs)
		if runner == "" {
			return
		}
		runners = append(runners, fmt.Sprintf("%s (%s)", termsafe.Line(st.Name), runner))
	}
	if len(runners) == 0 {
		return
	}
	fmt.Fprintf(s.opts.IO.ErrOut, "still connecting after %s: %s, most likely downloading the server on a first run; waiting for it (Ctrl-C to stop)\n",
		formatElapsed(s.opts.Wait), strings.Join(runners, ", "))
	s.wait(ctx, -1)
}

// packageRunner is the package runner that starts stdio server rs ("npx",
// host.IsPackageRunner; "" for none), fit for a terminal.
func packageRunner(rs *config.ResolvedServer) string {
	if config.InferType(rs.Effective) != config.TypeStdio || !host.IsPackageRunner(rs.Effective.Command) {
		return ""
	}
	return termsafe.Line(filepath.Base(rs.Effective.Command))
}
