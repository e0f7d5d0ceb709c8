package gateway

import (
	"context"
	"strings"
	"sync"

	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/policy"
)

// NewPermit is host.PolicyPermit for a gateway whose callers are
// principals (docs/gateway.md, For teams): a call is decided by p together with the rules
// a scopes to its principal and the principal's groups (a nil a, or a call
// without a principal, is decided by p alone). Deny anywhere beats ask
// beats allow, as everywhere; an ask goes to opts.Asker, which puts it to
// the calling client's own session ([Asker]) and writes a principal's
// "always" to a's file ([Auth.AllowFor]). The decision, the rule that
// made it and the answer are kept for the call's audit line and metrics.
// It is safe for concurrent use.
func NewPermit(p *policy.Policy, a *Auth, opts *host.PermitOptions) host.Permit {
	var o host.PermitOptions
	if opts != nil {
		o = *opts
	}
	if o.UserSettings == "" {
		o.UserSettings = "~/.switchboard/settings.json"
	}
	c := &scopedCache{base: p}
	var (
		mu     sync.Mutex
		always = map[[3]string]bool{}
	)
	return func(ctx context.Context, req host.PermitRequest) error {
		rec := recordFrom(ctx)
		pol := p
		var who string
		if pr := rec.who(); pr != nil && a != nil {
			pol, who = c.policy(a.Scoped(), pr), pr.Name
		}
		preq := policy.Request{Tool: req.Tool, Server: req.Server, ToolName: req.ToolName, Autopilot: o.Autopilot}
		if an := req.Annotations; an != nil {
			preq.Annotations = policy.Annotations{ReadOnlyHint: an.ReadOnlyHint, DestructiveHint: an.DestructiveHint != nil && *an.DestructiveHint}
		}
		if pol.NeedsArgs(preq) {
			// A rule with argument conditions could match (a no-op when
			// the host decoded them: host.Options.LazyPermitArgs).
			req.DecodeArgs()
		}
		preq.Args = req.Args
		d := pol.Decide(preq)
		rec.decided(d)
		switch d.Action {
		case policy.Allow:
			return nil
		case policy.Deny:
			return &host.DeniedError{Tool: req.Tool, Decision: d, Hint: d.Hint(o.UserSettings)}
		}
		key := [3]string{who, req.Server, req.ToolName}
		if req.Server == "" {
			key[2] = req.Tool
		}
		mu.Lock()
		ok := always[key]
		mu.Unlock()
		if ok {
			return nil
		}
		if o.Asker == nil {
			return &host.DeniedError{Tool: req.Tool, Decision: d, Hint: d.Hint(o.UserSettings)}
		}
		if a != nil {
			// The Asker writes a principal's "always" to a, whose rules
			// this check reads.
			ctx = context.WithValue(ctx, permitAuthKey{}, a)
		}
		req.DecodeArgs() // the person asked is shown them
		ans, err := o.Asker.AskPermission(ctx, req, d)
		switch {
		case err != nil:
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return &host.DeniedError{Tool: req.Tool, Decision: d, Hint: d.Hint(o.UserSettings)}
		case ans == host.AnswerAlways:
			mu.Lock()
			always[key] = true
			mu.Unlock()
			return nil
		case ans == host.AnswerOnce:
			return nil
		}
		return &host.DeniedError{Tool: req.Tool, Decision: d, Asked: true}
	}
}

// scopedCache holds the policy of each principal (the base rules with its
// own and its groups'), built once per load of the auth file.
type scopedCache struct {
	base   *policy.Policy
	mu     sync.Mutex
	scoped *policy.Scoped
	m      map[string]*policy.Policy
}

func (c *scopedCache) policy(s *policy.Scoped, p *Principal) *policy.Policy {
	if s.Empty() {
		return c.base
	}
	k := p.Name + "\x00" + strings.Join(p.Groups, "\x00")
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.scoped != s {
		c.scoped, c.m = s, map[string]*policy.Policy{}
	}
	pol := c.m[k]
	if pol == nil {
		rules := s.For(p.Name, p.Groups)
		pol = c.base
		if len(rules) > 0 {
			pol = c.base.With(rules...)
		}
		c.m[k] = pol
	}
	return pol
}
