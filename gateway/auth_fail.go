package gateway

import (
	"errors"
	"fmt"
	"math"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/time/rate"
)

// DefaultAuthFailures is how many refused credentials one client address
// may present in a minute (AuthOptions.FailuresPerMinute): as many at
// once, then one each 60/N seconds. Past them, its requests are answered
// 429 without their credential being checked, so that nobody can guess
// the shared token or a key at the speed of the network.
const DefaultAuthFailures = 10

// MaxFailureAddrs bounds the client addresses the failure limit keeps:
// past it, the addresses whose budget has refilled are dropped (at most
// once a second), else an arbitrary one, which starts afresh.
const MaxFailureAddrs = 10000

// TooManyFailuresError is the refusal of a request from a client address
// that presented too many refused credentials lately
// (AuthOptions.FailuresPerMinute): its credential was not checked.
type TooManyFailuresError struct {
	// RetryAfter is when the address may present a credential again.
	RetryAfter time.Duration
}

func (e *TooManyFailuresError) Error() string {
	return fmt.Sprintf("too many refused credentials from this address: try again in %ds", RetryAfterSeconds(e.RetryAfter))
}

// RetryAfterSeconds is d as a Retry-After header's whole seconds, at
// least 1.
func RetryAfterSeconds(d time.Duration) int {
	return max(1, int(math.Ceil(d.Seconds())))
}

// failLimit keeps, per client address, a budget of refused credentials.
// Only an address that has had one refused has an entry: a request of any
// other is never held up.
type failLimit struct {
	perMinute int
	now       func() time.Time
	log       func(addr string)
	n         atomic.Int64 // len(m), read without mu

	mu    sync.Mutex
	m     map[string]*failEntry
	swept time.Time
}

type failEntry struct {
	lim  *rate.Limiter
	last time.Time // the last refusal
}

func newFailLimit(perMinute int, now func() time.Time, log func(addr string)) *failLimit {
	return &failLimit{perMinute: perMinute, now: now, log: log, m: map[string]*failEntry{}}
}

// wait returns how long r's address must wait before presenting a
// credential again: 0 for one with budget left (or none spent).
func (f *failLimit) wait(r *http.Request) time.Duration {
	if f == nil || f.n.Load() == 0 {
		return 0
	}
	key := requestKey(r)
	f.mu.Lock()
	e := f.m[key]
	f.mu.Unlock()
	if e == nil {
		return 0
	}
	tokens := e.lim.TokensAt(f.now())
	if tokens >= 1 {
		return 0
	}
	return time.Duration((1 - tokens) / float64(e.lim.Limit()) * float64(time.Second))
}

// failed spends one of r's address's budget on a refused credential.
func (f *failLimit) failed(r *http.Request) {
	if f == nil {
		return
	}
	key := requestKey(r)
	now := f.now()
	f.mu.Lock()
	e := f.m[key]
	if e == nil {
		if (len(f.m) >= MaxFailureAddrs && now.Sub(f.swept) >= time.Second) || now.Sub(f.swept) > time.Minute {
			f.sweep(now)
		}
		for k := range f.m {
			if len(f.m) < MaxFailureAddrs {
				break
			}
			delete(f.m, k) // an arbitrary one: map order is random
		}
		e = &failEntry{lim: rate.NewLimiter(rate.Limit(float64(f.perMinute)/60), f.perMinute)}
		f.m[key] = e
		f.n.Store(int64(len(f.m)))
	}
	e.last = now
	e.lim.AllowN(now, 1)
	blocked := e.lim.TokensAt(now) < 1
	f.mu.Unlock()
	if blocked && f.log != nil {
		f.log(key)
	}
}

// sweep drops, under f.mu, the entries whose budget has refilled (no
// refusal for a minute): they hold up nothing.
func (f *failLimit) sweep(now time.Time) {
	f.swept = now
	for k, e := range f.m {
		if now.Sub(e.last) >= time.Minute {
			delete(f.m, k)
		}
	}
}

// requestKey is the address r's failures are counted under: its peer's
// (clientKey), except for a peer on the loopback interface that says
// whom it forwards: a reverse proxy on the same machine in front of a
// loopback-bound gateway (docs/gateway.md) is every remote client's peer,
// and counting them all under its address would let one guesser, ten
// wrong tokens a minute, lock out the whole team. Its last
// X-Forwarded-For entry (the one the proxy added: nginx's
// $proxy_add_x_forwarded_for, or $remote_addr) is the client's address.
// Only a process on this machine can be a loopback peer.
func requestKey(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		if fwd := r.Header.Values("X-Forwarded-For"); len(fwd) > 0 {
			last := fwd[len(fwd)-1]
			if i := strings.LastIndexByte(last, ','); i >= 0 {
				last = last[i+1:]
			}
			if c := net.ParseIP(strings.TrimSpace(last)); c != nil {
				return clientKey(c.String())
			}
		}
	}
	return clientKey(r.RemoteAddr)
}

// clientKey is the address a client's failures are counted under: its
// IPv4 address, or the /64 of its IPv6 address (one host commonly holds
// a whole /64).
func clientKey(remoteAddr string) string {
	host, _, err := net.SplitHostPort(remoteAddr)
	if err != nil {
		host = remoteAddr
	}
	ip := net.ParseIP(host)
	switch {
	case ip == nil:
		return host
	case ip.To4() != nil:
		return ip.To4().String()
	default:
		return ip.Mask(net.CIDRMask(64, 128)).String() + "/64"
	}
}

// countsAsFailure reports whether Authenticate's err is a credential
// refused that could be a guess: not a request without one (a client's
// first, to find the OAuth metadata), an expired access token (a client
// that has not refreshed it yet) or an issuer the gateway cannot reach.
func countsAsFailure(err error) bool {
	return err != nil && !errors.Is(err, errNoToken) && !errors.Is(err, ErrTokenExpired) && !errors.Is(err, ErrIssuerUnavailable)
}

// FailureWait returns how long r's client address must wait before it
// may present a credential again, having presented too many that were
// refused (AuthOptions.FailuresPerMinute); 0 when it may now. An address
// that had none refused lately always may.
func (a *Auth) FailureWait(r *http.Request) time.Duration {
	if a == nil {
		return 0
	}
	return a.fails.wait(r)
}

// Failed counts err, Authenticate's refusal of the credential r
// presented, against r's client address (not a missing credential, an
// expired access token or an unreachable issuer).
func (a *Auth) Failed(r *http.Request, err error) {
	if a != nil && countsAsFailure(err) {
		a.fails.failed(r)
	}
}

// AuthenticateRequest is Authenticate of token, the credential r
// presents, limited by r's client address: an address that presented
// too many refused credentials lately gets a *TooManyFailuresError
// without token being checked, and a refusal counts against its
// address.
func (a *Auth) AuthenticateRequest(r *http.Request, token string) (*Principal, error) {
	if wait := a.FailureWait(r); wait > 0 {
		return nil, &TooManyFailuresError{RetryAfter: wait}
	}
	p, err := a.Authenticate(r.Context(), token)
	if err != nil {
		a.Failed(r, err)
	}
	return p, err
}
