package host

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Prompter answers a server's elicitation requests on behalf of the user
// (SPEC §4). The CLI implements it on a terminal and declines when headless;
// the gateway forwards to its own client.
type Prompter interface {
	Elicit(ctx context.Context, server string, params *mcp.ElicitParams) (*mcp.ElicitResult, error)
}

// Decliner is a Prompter that declines every request: the headless answer.
type Decliner struct{}

// Elicit declines.
func (Decliner) Elicit(context.Context, string, *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	return &mcp.ElicitResult{Action: "decline"}, nil
}

// newClient builds the SDK client for one connection. Capabilities are
// empty unless the host really serves them: roots only with roots to give,
// elicitation only with a Prompter, and never sampling (refused, SPEC §4).
func (s *server) newClient(c *conn) *mcp.Client {
	h := s.h
	caps := &mcp.ClientCapabilities{}
	if len(h.opts.Roots) > 0 {
		caps.RootsV2 = &mcp.RootCapabilities{}
	}
	opts := &mcp.ClientOptions{
		Capabilities: caps,
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			s.tools.invalidate()
			h.emit(Event{Kind: EventToolsChanged, Server: s.name})
		},
		PromptListChangedHandler: func(context.Context, *mcp.PromptListChangedRequest) {
			s.prompts.invalidate()
			h.emit(Event{Kind: EventPromptsChanged, Server: s.name})
		},
		ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) {
			s.resources.invalidate()
			s.templates.invalidate() // resources/list_changed covers templates
			h.emit(Event{Kind: EventResourcesChanged, Server: s.name})
		},
		LoggingMessageHandler: func(_ context.Context, req *mcp.LoggingMessageRequest) {
			p := req.Params
			h.log.Info("server log", "server", s.name, "level", string(p.Level), "logger", p.Logger)
			h.emit(Event{Kind: EventLog, Server: s.name, Log: p})
		},
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			h.progress.deliver(req.Params)
			h.emit(Event{Kind: EventProgress, Server: s.name, Progress: req.Params})
		},
	}
	if h.opts.Prompter != nil {
		opts.ElicitationHandler = func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			qctx, stop := s.questionContext(ctx)
			defer stop()
			return h.opts.Prompter.Elicit(qctx, s.name, req.Params)
		}
	}
	client := mcp.NewClient(&mcp.Implementation{Name: h.opts.ClientName, Version: h.opts.ClientVersion}, opts)
	for _, r := range h.opts.Roots {
		client.AddRoots(&mcp.Root{URI: fileURI(r), Name: baseName(r)})
	}
	return client
}

// ProgressFunc receives progress notifications for one call.
type ProgressFunc func(*mcp.ProgressNotificationParams)

type progressKey struct{}

// WithProgress returns a context whose calls ask the server for progress
// notifications and deliver them to fn.
func WithProgress(ctx context.Context, fn ProgressFunc) context.Context {
	return context.WithValue(ctx, progressKey{}, fn)
}

// progressRouter hands progress notifications to the call that asked.
type progressRouter struct {
	next atomic.Int64
	mu   sync.Mutex
	fns  map[int64]ProgressFunc
}

func newProgressRouter() *progressRouter { return &progressRouter{fns: map[int64]ProgressFunc{}} }

func (r *progressRouter) register(fn ProgressFunc) (token int64, unregister func()) {
	token = r.next.Add(1)
	r.mu.Lock()
	r.fns[token] = fn
	r.mu.Unlock()
	return token, func() {
		r.mu.Lock()
		delete(r.fns, token)
		r.mu.Unlock()
	}
}

func (r *progressRouter) deliver(p *mcp.ProgressNotificationParams) {
	var tok int64
	switch t := p.ProgressToken.(type) {
	case float64:
		tok = int64(t)
	case int64:
		tok = t
	case int:
		tok = int64(t)
	default:
		return
	}
	r.mu.Lock()
	fn := r.fns[tok]
	r.mu.Unlock()
	if fn != nil {
		fn(p)
	}
}
