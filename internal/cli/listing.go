package cli

import (
	"context"
	"time"

	"github.com/switchboard-mcp/switchboard/config"
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
	s.wait(ctx, o.Wait)
	lctx, cancel := context.WithTimeout(ctx, max(o.Wait, 2*time.Second))
	return s, lctx, cancel, nil
}
