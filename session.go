package switchboard

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"

	"github.com/switchboard-mcp/switchboard/config"
)

// SessionTrust is how far the servers handed to [Switchboard.OpenSession]
// are trusted. There is no default: the embedder says.
type SessionTrust int

const (
	// TrustSessionServers: the embedder vouches for the servers (an
	// editor passing the person's own configuration): they start as the
	// user's own servers do.
	TrustSessionServers SessionTrust = iota + 1
	// ApproveSessionServers: the servers are treated as a repository's:
	// each starts only once the person approved its definition
	// (Prompter.ApproveServer, asked by OpenSession; headless, they are
	// held), runs in the project sandbox, and, remote, may not reach a
	// private network unless the settings allow project servers to.
	ApproveSessionServers
)

// NameValue is one environment variable or HTTP header of a
// [SessionServer], in the array form the Agent Client Protocol sends.
type NameValue struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// SessionServer is a server handed in at run time, as the Agent Client
// Protocol's session/new sends it in mcpServers: stdio {name, command,
// args, env: [{name, value}]}, or {type: "http" or "sse", name, url,
// headers: [{name, value}]}. Its JSON form is that one.
type SessionServer struct {
	// Type is "http" or "sse" for a remote server; "" or "stdio" for a
	// command.
	Type    string      `json:"type,omitempty"`
	Name    string      `json:"name"`
	Command string      `json:"command,omitempty"`
	Args    []string    `json:"args,omitempty"`
	Env     []NameValue `json:"env,omitempty"`
	URL     string      `json:"url,omitempty"`
	Headers []NameValue `json:"headers,omitempty"`
}

// server is s as a configuration entry.
func (s SessionServer) server() config.Server {
	out := config.Server{Command: s.Command, Args: s.Args, URL: s.URL}
	switch s.Type {
	case "", "stdio":
		if s.Command != "" {
			out.Type = config.TypeStdio
		}
	default:
		out.Type = config.Type(s.Type)
	}
	for _, e := range s.Env {
		if out.Env == nil {
			out.Env = map[string]string{}
		}
		out.Env[e.Name] = e.Value
	}
	for _, h := range s.Headers {
		if out.Headers == nil {
			out.Headers = map[string]string{}
		}
		out.Headers[h.Name] = h.Value
	}
	return out
}

// SessionOptions configure [Switchboard.OpenSession].
type SessionOptions struct {
	// Profile, if set, narrows the session to a profile of the settings
	// (as [Switchboard.View]); its own servers are shown either way.
	Profile string
	// Servers are the session's own servers.
	Servers []SessionServer
	// Trust says how far they are trusted; it must be set.
	Trust SessionTrust
}

// ErrSessionServer is wrapped by the errors of OpenSession about the
// servers handed in.
var ErrSessionServer = errors.New("session server")

// OpenSession opens a session view (the Agent Client Protocol case: an
// editor's session/new hands the agent mcpServers): a view of sb, narrowed
// to opts.Profile if set, that also shows opts.Servers. These start now,
// trusted as opts.Trust says, and join sb's supervision (restarts,
// circuit breaking, reloads keep them); one whose definition is that of a
// server sb already runs is that server, under its configured name, never
// a second process. The session's servers are sb's too while the
// session is open (sb shows them; sb's other views do not). Closing the
// session stops the servers it started (and those of the sessions opened
// from it), and only those. A name that sb's
// configuration or another session already uses, or a definition that does
// not resolve, is an error and nothing starts. After Close (of sb, of a
// view it was made from, or of the Switchboard) it fails with an error
// wrapping host.ErrClosed.
func (sb *Switchboard) OpenSession(ctx context.Context, opts SessionOptions) (*Switchboard, error) {
	switch opts.Trust {
	case TrustSessionServers, ApproveSessionServers:
	default:
		return nil, fmt.Errorf("%w: SessionOptions.Trust must say how far the servers are trusted (TrustSessionServers or ApproveSessionServers)", ErrSessionServer)
	}
	if err := sb.closedErr(); err != nil {
		// Not a session whose servers never start.
		return nil, err
	}
	if opts.Profile != "" {
		if _, err := profileNamed(sb.Settings(), opts.Profile); err != nil {
			return nil, err
		}
	}
	v := sb.newView(opts.Profile)
	if len(opts.Servers) == 0 {
		return v, nil
	}
	sh := sb.shared
	defs := map[string]config.Server{}
	for _, s := range opts.Servers {
		if _, dup := defs[s.Name]; dup {
			return nil, fmt.Errorf("%w %q: handed in twice", ErrSessionServer, s.Name)
		}
		defs[s.Name] = s.server()
	}
	cfg := sh.cfg.Load()
	// Resolved as the configuration's are (names, transports, the
	// managed allow and deny lists), without the user's and project files.
	res, err := config.Load(&config.LoadOptions{Home: sh.opts.Home, HomeDir: sh.opts.HomeDir, Workspace: cfg.Workspace, Cwd: cfg.Workspace,
		ManagedDir: sh.opts.ManagedDir, StrictMCPConfig: true, Session: defs, LookupEnv: sh.opts.LookupEnv})
	if err != nil {
		return nil, err
	}
	var added []config.ResolvedServer
	for _, rs := range res.Servers {
		if rs.Scope != config.ScopeSession {
			continue
		}
		if err := rs.Err(); err != nil {
			return nil, fmt.Errorf("%w %q: %v", ErrSessionServer, rs.Name, err)
		}
		if opts.Trust == ApproveSessionServers {
			// As a repository's in every respect: approval, the project
			// sandbox, the private-network guard of remote ones.
			rs.Scope, rs.Trust = config.ScopeProject, config.TrustRepo
		}
		added = append(added, rs)
	}
	sh.reloadMu.Lock()
	defer sh.reloadMu.Unlock()
	if err := sb.closedErr(); err != nil {
		// Closed meanwhile: closeSession, which holds reloadMu too,
		// would not see the servers added now.
		return nil, err
	}
	cur := sh.cfg.Load()
	fresh := added[:0:0]
	for _, rs := range added {
		// One already running (the same definition) is shared.
		if i := slices.IndexFunc(cur.Servers, func(c config.ResolvedServer) bool { return reflect.DeepEqual(c.Effective, rs.Effective) }); i >= 0 {
			v.view.shared = append(v.view.shared, cur.Servers[i].Name)
			continue
		}
		if cur.Server(rs.Name) != nil {
			return nil, fmt.Errorf("%w %q: the name is taken by a configured server or another session's, with another definition", ErrSessionServer, rs.Name)
		}
		fresh = append(fresh, rs)
	}
	added = fresh
	if opts.Trust == ApproveSessionServers && canApprove(sh.opts.Prompter) {
		if err := sh.trust.Ask(ctx, &config.Resolved{Workspace: cur.Workspace, Servers: added}, sh.opts.Prompter); err != nil && ctx.Err() != nil {
			return nil, err
		}
	}
	sh.sessionMu.Lock()
	if sh.sessions == nil {
		sh.sessions = map[string]sessionServer{}
	}
	for _, rs := range added {
		sh.sessions[rs.Name] = sessionServer{rs: rs, owner: v.view}
		v.view.own = append(v.view.own, rs.Name)
	}
	sh.sessionMu.Unlock()
	next := sh.withSessions(cur)
	sh.cfg.Store(next)
	sb.root.Apply(next)
	return v, nil
}

// sessionServer is a server a session view added, and that view.
type sessionServer struct {
	rs    config.ResolvedServer
	owner *view
}

// withSessions is cfg with the sessions' servers added (a reload's
// configuration comes from the files, which do not hold them).
func (sh *shared) withSessions(cfg *config.Resolved) *config.Resolved {
	sh.sessionMu.Lock()
	defer sh.sessionMu.Unlock()
	if len(sh.sessions) == 0 {
		return cfg
	}
	next := *cfg
	next.Servers = slices.Clone(cfg.Servers)
	for _, name := range slices.Sorted(maps.Keys(sh.sessions)) {
		if next.Server(name) == nil {
			next.Servers = append(next.Servers, sh.sessions[name].rs)
		}
	}
	return &next
}

// sessionOwner is the view that added the server named, or nil.
func (sh *shared) sessionOwner(name string) *view {
	sh.sessionMu.Lock()
	defer sh.sessionMu.Unlock()
	if s, ok := sh.sessions[name]; ok {
		return s.owner
	}
	return nil
}

// closeSession stops the servers v added, and those of the sessions
// opened from v (closed with it).
func (sh *shared) closeSession(v *view) error {
	sh.reloadMu.Lock()
	defer sh.reloadMu.Unlock()
	if sh.root.Closed() {
		// Its servers were stopped with the rest; the configuration
		// shown stays the one they last ran under, as Reload leaves it.
		return nil
	}
	sh.sessionMu.Lock()
	gone := map[string]bool{}
	for n, s := range sh.sessions {
		if s.owner.within(v) {
			delete(sh.sessions, n)
			gone[n] = true
		}
	}
	v.own = nil
	sh.sessionMu.Unlock()
	if len(gone) == 0 {
		return nil
	}
	cur := sh.cfg.Load()
	next := *cur
	next.Servers = make([]config.ResolvedServer, 0, len(cur.Servers))
	for _, rs := range cur.Servers {
		if !gone[rs.Name] {
			next.Servers = append(next.Servers, rs)
		}
	}
	sh.cfg.Store(&next)
	sh.root.Apply(&next)
	return nil
}
