package gateway

import (
	"context"
	"strings"
	"sync"

	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/policy"
)

// NewPermit is host.PolicyPermit for a gateway whose callers are
// principals (docs/gateway.md, For teams): a call is decided by p together
// with the rules a scopes to its principal and the principal's groups (a
// nil a, or a call without a principal, is decided by p alone), and an
// "always" answer is remembered per principal. Deny anywhere beats ask
// beats allow, as everywhere; an ask goes to opts.Asker, which puts it to
// the calling client's own session ([Asker]) and writes a principal's
// "always" to a's file ([Auth.AllowFor]). The decision, the rule that
// made it and the answer are kept for the call's audit line and metrics.
// opts.Rules and opts.Decided are the gateway's own and are replaced. It
// is safe for concurrent use.
func NewPermit(p *policy.Policy, a *Auth, opts *host.PermitOptions) host.Permit {
	var o host.PermitOptions
	if opts != nil {
		o = *opts
	}
	c := &scopedCache{base: p}
	o.Rules = func(ctx context.Context) (*policy.Policy, string) {
		if pr := recordFrom(ctx).who(); pr != nil && a != nil {
			return c.policy(a.Scoped(), pr), pr.Name
		}
		return p, ""
	}
	o.Decided = func(ctx context.Context, d policy.Decision) { recordFrom(ctx).decided(d) }
	if a != nil && o.Asker != nil {
		o.Asker = authAsker{o.Asker, a}
	}
	return host.PolicyPermit(p, &o)
}

// authAsker hands the Asker the Auth whose rules decided the call, so
// that a principal's "always" is written there, where the next decision
// reads it.
type authAsker struct {
	host.Asker
	a *Auth
}

func (w authAsker) AskPermission(ctx context.Context, req host.PermitRequest, d policy.Decision) (host.Answer, error) {
	return w.Asker.AskPermission(context.WithValue(ctx, permitAuthKey{}, w.a), req, d)
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
