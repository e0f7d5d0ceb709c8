package gateway

import (
	"fmt"
	"math"
	"sort"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/switchboard-mcp/switchboard/policy"
)

// RateLimitedError is the refusal of a call over one of its principal's
// rate limits (AuthEntry.RateLimit). The call was not made.
type RateLimitedError struct {
	Principal string
	// Limit names the limit: "60 calls per minute" or "5 calls per minute
	// of mcp__github__create_issue", and Entry the auth file entry that
	// sets it (the principal, or group:<g>).
	Limit, Entry string
	// RetryAfter is when a call fits the budget again.
	RetryAfter time.Duration
}

func (e *RateLimitedError) Error() string {
	secs := math.Ceil(e.RetryAfter.Seconds()*10) / 10
	return fmt.Sprintf("rate limit: %s may make %s (set for %s in the gateway auth file); the call was not made; try again in %.1fs",
		e.Principal, e.Limit, e.Entry, secs)
}

// compiledRate is one entry's limits, ready to match.
type compiledRate struct {
	perMinute int
	tools     []toolRate
}

type toolRate struct {
	text string
	rule policy.Rule
	n    int
}

func compileRate(r RateLimit) compiledRate {
	c := compiledRate{perMinute: r.PerMinute}
	for text, n := range r.Tools {
		// A deny-list rule, so that mcp__* counts too: it only matches.
		c.tools = append(c.tools, toolRate{text: text, rule: policy.NewRule(policy.Deny, text, policy.Source{}), n: n})
	}
	sort.Slice(c.tools, func(i, j int) bool { return c.tools[i].text < c.tools[j].text })
	return c
}

// limiters are the token buckets of every (principal, entry, limit).
type limiters struct {
	mu sync.Mutex
	m  map[limitKey]*rate.Limiter
}

type limitKey struct {
	principal, entry, pattern string
	perMinute                 int
}

func (l *limiters) init() { l.m = map[limitKey]*rate.Limiter{} }

func (l *limiters) get(k limitKey) *rate.Limiter {
	lim := l.m[k]
	if lim == nil {
		// A minute's budget may be spent at once, then it refills evenly.
		lim = rate.NewLimiter(rate.Limit(float64(k.perMinute)/60), k.perMinute)
		l.m[k] = lim
	}
	return lim
}

// Limit takes one call of p's budget for server's tool (host names; "" for
// the gateway's own tools), or returns a *RateLimitedError saying when to
// try again; then no budget is taken. A nil p (no authentication) is not
// limited.
func (a *Auth) Limit(p *Principal, server, tool string) error {
	if a == nil || p == nil {
		return nil
	}
	st := a.state.Load()
	if len(st.rates) == 0 {
		return nil
	}
	entries := []string{p.Name}
	for _, g := range p.Groups {
		entries = append(entries, GroupPrefix+g)
	}
	req := policy.Request{Server: server, ToolName: tool}
	now := a.now()
	type taken struct {
		r              *rate.Reservation
		entry, pattern string // pattern "" for the per-minute budget
		n              int
	}
	var got []taken
	worst := -1
	var worstDelay time.Duration
	a.limits.mu.Lock()
	defer a.limits.mu.Unlock()
	take := func(entry, pattern string, n int) {
		r := a.limits.get(limitKey{p.Name, entry, pattern, n}).ReserveN(now, 1)
		got = append(got, taken{r, entry, pattern, n})
		d := time.Duration(math.MaxInt64)
		if r.OK() {
			d = r.DelayFrom(now)
		}
		if d > 0 && d > worstDelay {
			worst, worstDelay = len(got)-1, d
		}
	}
	for _, e := range entries {
		c, ok := st.rates[e]
		if !ok {
			continue
		}
		if c.perMinute > 0 {
			take(e, "", c.perMinute)
		}
		if server == "" {
			continue
		}
		for _, t := range c.tools {
			if t.rule.Matches(req) {
				take(e, t.text, t.n)
			}
		}
	}
	if worst < 0 {
		return nil
	}
	for _, t := range got {
		t.r.CancelAt(now)
	}
	// The limit's words only for a refusal, not for every call.
	w := got[worst]
	limit := fmt.Sprintf("%d calls per minute", w.n)
	if w.pattern != "" {
		limit += " of " + w.pattern
	}
	return &RateLimitedError{Principal: p.Name, Limit: limit, Entry: w.entry, RetryAfter: worstDelay}
}
