package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/host"
)

// PerMember is the auth file's entry of an upstream server that each
// principal calls with its own credentials (docs/gateway.md, Each
// member's own credentials): every ${secret:NAME} of the server's
// definition is then read from that principal's values — or, for a
// remote server that names none, the principal's own OAuth login is
// used — never the gateway's, over a connection of that principal's own.
type PerMember struct {
	// Fallback is what a principal without its own values gets: "" (or
	// "none"), a refusal that says how to add them; "shared", the
	// gateway's own connection, with the gateway's values.
	Fallback string `json:"fallback,omitempty"`
}

// FallbackShared lets principals without their own values of a
// per-member server use the gateway's.
const FallbackShared = "shared"

// Credential names, in the audit line, whose credential a call of a
// per-member server used: the principal's own name, or one of these.
const (
	// CredentialShared: the gateway's own values, as the admin allowed
	// (fallback "shared"), or the shared token's caller.
	CredentialShared = "shared"
	// CredentialNone: none; the call was refused.
	CredentialNone = "none"
	// CredentialMemberOAuth: the caller's own OAuth login to the server
	// (`switchboard gateway login`); the audit line's principal is whose.
	CredentialMemberOAuth = "member oauth"
)

func checkPerMember(m map[string]*PerMember) error {
	for server, e := range m {
		if !config.ValidName(server) {
			return fmt.Errorf("perMember: %q is not a server name", server)
		}
		if e == nil {
			return fmt.Errorf("perMember %q is null; write {} (or {\"fallback\": \"shared\"})", server)
		}
		switch e.Fallback {
		case "", "none", FallbackShared:
		default:
			return fmt.Errorf("perMember %q: fallback %q: use \"none\" or \"shared\"", server, e.Fallback)
		}
	}
	return nil
}

func perMemberOf(m map[string]*PerMember) map[string]PerMember {
	out := make(map[string]PerMember, len(m))
	for server, e := range m {
		out[server] = *e
	}
	return out
}

// PerMember returns the per-member entry of server, if the auth file has
// one. A nil *Auth, or an auth file that cannot be used, has none.
func (a *Auth) PerMember(server string) (PerMember, bool) {
	if a == nil {
		return PerMember{}, false
	}
	e, ok := a.state.Load().perMember[server]
	return e, ok
}

// PerMemberServers returns the names of the per-member servers, sorted.
func (a *Auth) PerMemberServers() []string {
	if a == nil {
		return nil
	}
	var out []string
	for s := range a.state.Load().perMember {
		out = append(out, s)
	}
	sort.Strings(out)
	return out
}

// Members holds the principals' own upstream connections (Options.Members):
// for each principal that calls a per-member server with values (or an
// OAuth login) of its own, a host of its own, opened at its first such
// call and kept until Close, or until it has been idle for Idle. A
// principal's host is never used for another's calls.
type Members struct {
	// Missing returns the secrets of server that principal holds no value
	// for (none: it may call). An error (a store that cannot be read, a
	// server whose definition names no secret) refuses the call.
	Missing func(ctx context.Context, principal, server string) ([]string, error)
	// Open opens principal's own host: the gateway's configuration, cut
	// to the per-member servers, with the gateway's permission check, and
	// every secret read from principal's values. closeHost ends it.
	Open func(ctx context.Context, principal string) (h *host.Host, closeHost func(), err error)
	// Hint says how principal adds its values of server's secrets; the
	// refusal of a call without them ends with it.
	Hint func(principal, server string, missing []string) string
	// Idle, if > 0, closes a principal's host that no call has used for
	// that long; its next call opens a new one. 0 keeps it until Close.
	Idle time.Duration
	// afterFunc runs f after d unless stopped (time.AfterFunc; tests
	// replace it to fire the idle timer themselves).
	afterFunc func(d time.Duration, f func()) (stop func() bool)

	// OAuth, if set, reports whether a principal's credential of server
	// is its own OAuth login (rather than values of secrets): Missing then
	// reports the login missing, and the audit names CredentialMemberOAuth.
	OAuth func(server string) bool

	mu    sync.Mutex
	hosts map[string]*memberHost
	done  bool
	shuts sync.WaitGroup // hosts closing in the background
}

type memberHost struct {
	ready   chan struct{}
	h       *host.Host
	close   func()
	err     error
	servers string // the per-member servers it was opened for
	users   int    // calls using it (guarded by Members.mu)
	stale   bool   // replaced: closed when its last user is done
	idle    int    // generation of the idle timer; a use makes it stale
}

var errMembersClosed = errors.New("the gateway is shutting down")

// host returns principal's host for the per-member servers named, opening
// it once (callers of one principal share the opening) and again when the
// servers changed. release must be called when the call is done: a host
// that was replaced meanwhile is closed by its last caller.
func (m *Members) host(ctx context.Context, principal string, servers []string) (h *host.Host, release func(), err error) {
	key := strings.Join(servers, ",")
	m.mu.Lock()
	if m.done {
		m.mu.Unlock()
		return nil, nil, errMembersClosed
	}
	if m.hosts == nil {
		m.hosts = map[string]*memberHost{}
	}
	mh, ok := m.hosts[principal]
	if ok && mh.servers != key {
		if m.retireLocked(principal, mh) {
			m.shutLater(mh)
		}
		ok = false
	}
	if !ok {
		mh = &memberHost{ready: make(chan struct{}), servers: key}
		m.hosts[principal] = mh
	}
	mh.users++
	mh.idle++ // in use: a pending idle timer does nothing
	m.mu.Unlock()
	release = func() {
		m.mu.Lock()
		mh.users--
		closeNow := mh.stale && mh.users == 0
		if !mh.stale && mh.users == 0 {
			m.idleLocked(principal, mh)
		}
		m.mu.Unlock()
		if closeNow {
			mh.shut()
		}
	}
	if !ok {
		// Not the call's context: the host outlives the call.
		mh.h, mh.close, mh.err = m.Open(context.WithoutCancel(ctx), principal)
		close(mh.ready)
		if mh.err != nil {
			m.mu.Lock()
			m.retireLocked(principal, mh) // the next call tries again
			m.mu.Unlock()
			// (nothing to close: it did not open)
		}
	}
	select {
	case <-mh.ready:
		if mh.err != nil {
			release()
			return nil, nil, mh.err
		}
		return mh.h, release, nil
	case <-ctx.Done():
		release()
		return nil, nil, ctx.Err()
	}
}

// idleLocked starts mh's idle timer (Members.Idle): unless a call uses
// mh before it fires, mh is retired and closed then.
func (m *Members) idleLocked(principal string, mh *memberHost) {
	if m.Idle <= 0 {
		return
	}
	mh.idle++
	gen := mh.idle
	after := m.afterFunc
	if after == nil {
		after = func(d time.Duration, f func()) func() bool { return time.AfterFunc(d, f).Stop }
	}
	after(m.Idle, func() {
		m.mu.Lock()
		defer m.mu.Unlock()
		if mh.idle == gen && mh.users == 0 && !mh.stale && !m.done && m.retireLocked(principal, mh) {
			m.shutLater(mh)
		}
	})
}

// retireLocked takes mh out of use and reports whether it is to be
// closed now (no call uses it); else its last call closes it.
func (m *Members) retireLocked(principal string, mh *memberHost) bool {
	if m.hosts[principal] == mh {
		delete(m.hosts, principal)
	}
	mh.stale = true
	return mh.users == 0
}

// shut closes the host once it is open.
func (mh *memberHost) shut() {
	<-mh.ready
	if mh.close != nil {
		mh.close()
	}
}

// shutLater closes mh in the background; Close waits for it. Called with
// m.mu held, so that a Close that follows the retirement counts it.
func (m *Members) shutLater(mh *memberHost) {
	m.shuts.Add(1)
	go func() {
		defer m.shuts.Done()
		mh.shut()
	}()
}

// retireAll retires every host, refuses later calls, and returns the
// hosts to close now.
func (m *Members) retireAll() []*memberHost {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.done = true
	var idle []*memberHost
	for p, mh := range m.hosts {
		if m.retireLocked(p, mh) {
			idle = append(idle, mh)
		}
	}
	return idle
}

// Forget retires principal's host (its values changed): its next call
// opens a new one; calls in flight finish on the old.
func (m *Members) Forget(principal string) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if mh, ok := m.hosts[principal]; ok && m.retireLocked(principal, mh) {
		m.shutLater(mh)
	}
}

// Reset retires every principal's host: their next calls open new ones
// (after the configuration changed); calls in flight finish on the old.
func (m *Members) Reset() {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for p, mh := range m.hosts {
		if m.retireLocked(p, mh) {
			m.shutLater(mh)
		}
	}
}

// Close closes every principal's host that no call uses (the others close
// with their last call), and refuses later calls.
func (m *Members) Close() error {
	if m == nil {
		return nil
	}
	for _, mh := range m.retireAll() {
		mh.shut()
	}
	m.shuts.Wait()
	return nil
}

// callMember runs a call of a per-member server as its caller: over the
// caller's own host when the caller holds values of its own, else on the
// gateway's host if the admin allowed it, else refused with how to add
// them. ok is false when the call is not the members' (the gateway's
// host runs it).
func (g *Gateway) callMember(ctx context.Context, rt resolved, args json.RawMessage) (res *mcp.CallToolResult, err error, ok bool) {
	r := rt.r
	m := g.opts.Members
	pm, per := g.opts.Auth.PerMember(r.server)
	if !per {
		return nil, nil, false
	}
	rec := recordFrom(ctx)
	p := rec.who()
	if !p.Keyed() {
		// The shared token stands for the person who runs the gateway.
		rec.setCredential(CredentialShared)
		return nil, nil, false
	}
	// A gateway without Members has no member's own values: it fails
	// closed, as a member without them.
	missing := []string{"its secrets"}
	if m != nil {
		var err error
		if missing, err = m.Missing(ctx, p.Name, r.server); err != nil {
			rec.setCredential(CredentialNone)
			return nil, fmt.Errorf("server %s is called with each member's own credentials, and yours cannot be read: %w", r.server, err), true
		}
	}
	if len(missing) > 0 {
		if pm.Fallback == FallbackShared {
			rec.setCredential(CredentialShared)
			return nil, nil, false
		}
		rec.setCredential(CredentialNone)
		msg := fmt.Sprintf("server %s is called with each member's own credentials, and %s has no value of %s", r.server, p.Name, strings.Join(missing, ", "))
		if m.usesOAuth(r.server) {
			msg = fmt.Sprintf("server %s is called with each member's own OAuth login, and %s has not logged in to it", r.server, p.Name)
		}
		if m != nil && m.Hint != nil {
			msg += "; " + m.Hint(p.Name, r.server, missing)
		}
		return g.refusal(rt.name, msg), nil, true
	}
	h, release, err := m.host(ctx, p.Name, g.opts.Auth.PerMemberServers())
	if err != nil {
		rec.setCredential(CredentialNone)
		return nil, fmt.Errorf("opening %s's own connection to %s: %w", p.Name, r.server, err), true
	}
	defer release()
	if m.usesOAuth(r.server) {
		rec.setCredential(CredentialMemberOAuth)
	} else {
		rec.setCredential(p.Name)
	}
	if rec != nil {
		rec.mu.Lock()
		rec.memberRedact = h.Redact
		rec.mu.Unlock()
	}
	res, err = h.CallTool(ctx, r.server, r.tool, args)
	return res, err, true
}

// usesOAuth reports whether members call server with their own OAuth
// login (m may be nil).
func (m *Members) usesOAuth(server string) bool {
	return m != nil && m.OAuth != nil && m.OAuth(server)
}

// setCredential records whose credential the call used (r may be nil).
func (r *callRecord) setCredential(who string) {
	if r == nil {
		return
	}
	r.mu.Lock()
	r.credential = who
	r.mu.Unlock()
}
