// Package netguard keeps outbound HTTP from reaching addresses a remote MCP
// server must not make Switchboard reach (docs/security.md, Outbound URL
// safety): cloud metadata
// endpoints and link-local addresses always, and loopback, private and
// reserved addresses unless the [Policy] allows them.
//
// Two checks work together. [CheckURL] (and [Policy.CheckURL]) looks at a
// URL before anything is sent: the scheme must be http or https, and a host
// written as an IP address — in any spelling a URL parser or resolver
// accepts: 2852039166, 0251.0376.0251.0376, 0xa9fea9fe, ::ffff:169.254.169.254
// — is parsed and judged, so the error is early and names the address.
// [Policy.DialContext] is the authoritative check: it resolves the host
// itself, judges every address the name resolves to, and dials the address
// it judged — never the name — so a DNS answer that changes between the
// check and the connect (DNS rebinding) cannot get round it. [Client] and
// [Policy.Transport] put both on every request and every redirect.
//
// The package is internal: embedders choose the policy through
// host.Options, and the host applies it to every remote transport.
package netguard

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// ErrRefused is wrapped by every error that refuses an address or URL.
var ErrRefused = errors.New("refused")

// RefusedError says what was refused and why. It wraps [ErrRefused].
type RefusedError struct {
	// Host is the host as written (a name or an address), or "" when the
	// URL itself was refused (its scheme).
	Host string
	// Addr is the address that was refused, when there is one.
	Addr netip.Addr
	// Reason completes "refused: …", e.g. "169.254.169.254 is a cloud
	// metadata address".
	Reason string
}

func (e *RefusedError) Error() string { return "refused: " + e.Reason }

// Unwrap makes errors.Is(err, ErrRefused) true.
func (e *RefusedError) Unwrap() error { return ErrRefused }

// Class is what kind of address an IP is, for the check.
type Class int

const (
	// Public addresses are always allowed.
	Public Class = iota
	// Private covers loopback, RFC 1918, unique-local (fc00::/7), CGNAT
	// (100.64.0.0/10), unspecified, multicast, broadcast and the reserved
	// ranges: refused unless Policy.AllowPrivate.
	Private
	// LinkLocal (169.254.0.0/16, fe80::/10) is always refused.
	LinkLocal
	// Metadata is a cloud metadata endpoint: always refused.
	Metadata
)

func (c Class) String() string {
	switch c {
	case Public:
		return "public"
	case Private:
		return "private"
	case LinkLocal:
		return "link-local"
	case Metadata:
		return "metadata"
	}
	return "Class(" + strconv.Itoa(int(c)) + ")"
}

// metadataAddrs are cloud metadata endpoints (instance credentials live
// there).
var metadataAddrs = map[netip.Addr]string{
	netip.MustParseAddr("169.254.169.254"): "a cloud metadata address",
	netip.MustParseAddr("169.254.170.2"):   "a cloud metadata address (AWS ECS task credentials)",
	netip.MustParseAddr("169.254.170.23"):  "a cloud metadata address (AWS EKS pod identity)",
	netip.MustParseAddr("fd00:ec2::254"):   "a cloud metadata address (AWS IPv6)",
	netip.MustParseAddr("fd00:ec2::23"):    "a cloud metadata address (AWS EKS pod identity, IPv6)",
	netip.MustParseAddr("100.100.100.200"): "a cloud metadata address (Alibaba Cloud)",
	netip.MustParseAddr("192.0.0.192"):     "a cloud metadata address (Oracle Cloud)",
	netip.MustParseAddr("168.63.129.16"):   "a cloud host-agent address (Azure WireServer)",
}

// metadataNames are host names of metadata services; they are refused by
// name, before any resolution.
var metadataNames = map[string]bool{
	"metadata":                   true,
	"metadata.google.internal":   true,
	"metadata.goog":              true,
	"instance-data":              true,
	"instance-data.ec2.internal": true,
	"metadata.azure.internal":    true,
	"metadata.tencentyun.com":    true,
}

type prefixClass struct {
	p     netip.Prefix
	class Class
	what  string
}

var prefixes = func() []prefixClass {
	var out []prefixClass
	add := func(class Class, what string, cidrs ...string) {
		for _, c := range cidrs {
			out = append(out, prefixClass{netip.MustParsePrefix(c), class, what})
		}
	}
	add(LinkLocal, "a link-local address", "169.254.0.0/16", "fe80::/10")
	add(Private, "a loopback address", "127.0.0.0/8", "::1/128")
	add(Private, "an unspecified address", "0.0.0.0/8", "::/128")
	add(Private, "a private address", "10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "fc00::/7")
	add(Private, "a shared (CGNAT) address", "100.64.0.0/10")
	add(Private, "a multicast address", "224.0.0.0/4", "ff00::/8")
	add(Private, "the broadcast address", "255.255.255.255/32")
	add(Private, "a reserved address",
		"240.0.0.0/4", "192.0.0.0/24", "192.0.2.0/24", "198.18.0.0/15", "198.51.100.0/24",
		"203.0.113.0/24", "192.88.99.0/24", "2001:db8::/32", "100::/64", "64:ff9b:1::/48",
		"fec0::/10", "2001:10::/28", "2001:20::/28", "::/96")
	return out
}()

var (
	nat64   = netip.MustParsePrefix("64:ff9b::/96")
	siit    = netip.MustParsePrefix("::ffff:0:0:0/96")
	sixTo4  = netip.MustParsePrefix("2002::/16")
	teredo  = netip.MustParsePrefix("2001::/32")
	compat4 = netip.MustParsePrefix("::/96")
)

// Classify says what kind of address ip is and, unless it is Public, why
// in words ("a cloud metadata address"). IPv4-mapped and IPv4-embedding
// IPv6 forms (::ffff:a.b.c.d, NAT64 64:ff9b::/96, 6to4 2002::/16, Teredo)
// are judged by the IPv4 address they carry, when that is worse.
func Classify(ip netip.Addr) (Class, string) {
	ip = ip.WithZone("")
	if ip.Is4In6() {
		ip = ip.Unmap()
	}
	class, what := classifyOne(ip)
	if v4, ok := embeddedV4(ip); ok {
		if c, w := classifyOne(v4); c > class {
			class, what = c, w+" (as "+v4.String()+" embedded in IPv6)"
		}
	}
	return class, what
}

func classifyOne(ip netip.Addr) (Class, string) {
	if what, ok := metadataAddrs[ip]; ok {
		return Metadata, what
	}
	for _, pc := range prefixes {
		if pc.p.Contains(ip) {
			return pc.class, pc.what
		}
	}
	return Public, ""
}

// embeddedV4 returns the IPv4 address an IPv6 transition form carries.
func embeddedV4(ip netip.Addr) (netip.Addr, bool) {
	b := ip.As16()
	switch {
	case nat64.Contains(ip), siit.Contains(ip), compat4.Contains(ip) && !ip.IsUnspecified() && ip != netip.IPv6Loopback():
		return netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]}), true
	case sixTo4.Contains(ip):
		return netip.AddrFrom4([4]byte{b[2], b[3], b[4], b[5]}), true
	case teredo.Contains(ip):
		// The client address is stored inverted in the last 32 bits.
		return netip.AddrFrom4([4]byte{^b[12], ^b[13], ^b[14], ^b[15]}), true
	}
	return netip.Addr{}, false
}

// ParseHost parses a URL host (without port or brackets) that spells an IP
// address, in any form a URL parser or the C resolver accepts: dotted
// decimal, IPv6 (with an optional zone), and the legacy IPv4 forms with one
// to four parts, each decimal, octal (leading 0) or hex (0x) — 2852039166,
// 0251.0376.0251.0376, 0xa9.0xfe.0xa9.0xfe, 169.254.43518. One trailing dot
// is ignored. ok is false for a name.
func ParseHost(host string) (netip.Addr, bool) {
	h := strings.TrimSuffix(host, ".")
	if h == "" {
		return netip.Addr{}, false
	}
	if strings.HasPrefix(h, "[") && strings.HasSuffix(h, "]") {
		h = h[1 : len(h)-1]
	}
	if strings.Contains(h, ":") {
		// url.Hostname leaves a zone escaped as %25.
		h = strings.Replace(h, "%25", "%", 1)
		ip, err := netip.ParseAddr(h)
		return ip, err == nil
	}
	return parseLegacyIPv4(h)
}

// parseLegacyIPv4 implements the WHATWG URL IPv4 parser (which matches
// inet_aton): up to four parts; the last fills the remaining bytes.
func parseLegacyIPv4(h string) (netip.Addr, bool) {
	parts := strings.Split(h, ".")
	if len(parts) > 4 {
		return netip.Addr{}, false
	}
	nums := make([]uint64, len(parts))
	for i, p := range parts {
		n, ok := parseIPv4Part(p)
		if !ok {
			return netip.Addr{}, false
		}
		nums[i] = n
	}
	last := len(nums) - 1
	for _, n := range nums[:last] {
		if n > 255 {
			return netip.Addr{}, false
		}
	}
	if nums[last] >= 1<<(8*(5-len(nums))) {
		return netip.Addr{}, false
	}
	v := nums[last]
	for i, n := range nums[:last] {
		v |= n << (8 * (3 - i))
	}
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}), true
}

func parseIPv4Part(p string) (uint64, bool) {
	if p == "" {
		return 0, false
	}
	base := 10
	switch {
	case len(p) >= 2 && (p[:2] == "0x" || p[:2] == "0X"):
		base, p = 16, p[2:]
		if p == "" {
			return 0, true // "0x" is zero, as WHATWG and inet_aton say
		}
	case len(p) >= 2 && p[0] == '0':
		base, p = 8, p[1:]
	}
	n, err := strconv.ParseUint(p, base, 64)
	if err != nil || n > 0xffffffff {
		return 0, false
	}
	return n, true
}

// Resolver resolves host names; *net.Resolver implements it.
type Resolver interface {
	LookupIPAddr(ctx context.Context, host string) ([]net.IPAddr, error)
}

// Policy says which addresses outbound connections may reach. The zero
// value refuses metadata, link-local, loopback, private and reserved
// addresses and resolves with net.DefaultResolver. A Policy is safe for
// concurrent use.
type Policy struct {
	// AllowPrivate allows loopback, private (RFC 1918, fc00::/7, CGNAT),
	// unspecified, multicast, broadcast and reserved addresses. Metadata
	// endpoints and link-local addresses stay refused.
	AllowPrivate bool
	// Resolver resolves host names at dial time. If nil, net.DefaultResolver.
	Resolver Resolver
	// Hint ends the message that refuses a private address: why it is
	// refused here and how to allow it. If empty, "private addresses are
	// not allowed here".
	Hint string
	// Dialer makes the connection to the checked address. If nil, a
	// net.Dialer with a 30 s timeout and 30 s keep-alive.
	Dialer *net.Dialer
}

func (p Policy) privateHint() string {
	if p.Hint != "" {
		return p.Hint
	}
	return "private addresses are not allowed here"
}

// CheckURL checks a URL with the policy that allows private addresses:
// the scheme must be http or https, there must be a host, and a host that
// is a metadata name or spells a metadata or link-local address (in any
// spelling) is refused. Host names are not resolved here: the dialer
// judges what they resolve to.
func CheckURL(raw string) error { return Policy{AllowPrivate: true}.CheckURL(raw) }

// CheckURL checks a URL before any request: scheme http or https, a host,
// and a host written as an address (or named "localhost", or a metadata
// name) judged by the policy. The error is a *RefusedError for a refused
// address or scheme, and a plain error for a URL that does not parse.
func (p Policy) CheckURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return fmt.Errorf("invalid URL %q: %v", raw, err)
	}
	return p.checkParsed(u)
}

func (p Policy) checkParsed(u *url.URL) error {
	switch strings.ToLower(u.Scheme) {
	case "http", "https":
	case "":
		return &RefusedError{Reason: fmt.Sprintf("%q has no scheme; remote MCP servers need an http:// or https:// URL", u.Redacted())}
	default:
		return &RefusedError{Reason: fmt.Sprintf("%s:// URLs are not allowed; remote MCP servers need http:// or https://", strings.ToLower(u.Scheme))}
	}
	host := u.Hostname()
	if host == "" {
		return fmt.Errorf("invalid URL %q: no host", u.Redacted())
	}
	return p.checkHost(host)
}

// checkHost judges a host as written, without resolving it.
func (p Policy) checkHost(host string) error {
	name := strings.ToLower(strings.TrimSuffix(host, "."))
	if metadataNames[name] {
		return &RefusedError{Host: host, Reason: fmt.Sprintf("%s is a cloud metadata host name", host)}
	}
	if ip, ok := ParseHost(host); ok {
		return p.checkAddr(host, ip)
	}
	if !p.AllowPrivate && (name == "localhost" || strings.HasSuffix(name, ".localhost")) {
		return &RefusedError{Host: host, Addr: netip.IPv6Loopback(),
			Reason: fmt.Sprintf("%s is a loopback host name; %s", host, p.privateHint())}
	}
	return nil
}

// CheckAddr judges one address under the policy. host is how it was
// written (a name it came from, or the address itself) for the message.
func (p Policy) CheckAddr(host string, ip netip.Addr) error { return p.checkAddr(host, ip) }

func (p Policy) checkAddr(host string, ip netip.Addr) error {
	class, what := Classify(ip)
	if class == Public || (class == Private && p.AllowPrivate) {
		return nil
	}
	shown := ip.String()
	if ip.Is4In6() {
		shown = ip.Unmap().String()
	}
	subject := shown
	if h := strings.Trim(host, "[]"); h != "" && h != shown {
		if _, isIP := ParseHost(h); isIP {
			subject = fmt.Sprintf("%s (%s)", h, shown)
		} else {
			subject = fmt.Sprintf("%s resolves to %s, which", h, shown)
		}
	}
	reason := fmt.Sprintf("%s is %s", subject, what)
	if class == Private {
		reason += "; " + p.privateHint()
	}
	return &RefusedError{Host: host, Addr: ip, Reason: reason}
}

// DialContext resolves addr's host itself, refuses the connection if any
// address it resolves to is refused by the policy, and otherwise dials the
// checked addresses (never the name again), first success wins. Use it as
// http.Transport.DialContext.
func (p Policy) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	if err := p.checkHost(host); err != nil {
		return nil, err
	}
	var ips []netip.Addr
	if ip, ok := ParseHost(host); ok {
		ips = []netip.Addr{ip.Unmap()}
	} else {
		r := p.Resolver
		if r == nil {
			r = net.DefaultResolver
		}
		answers, err := r.LookupIPAddr(ctx, host)
		if err != nil {
			return nil, err
		}
		for _, a := range answers {
			ip, ok := netip.AddrFromSlice(a.IP)
			if !ok {
				continue
			}
			if ip.Is4In6() {
				ip = ip.Unmap()
			}
			ips = append(ips, ip.WithZone(a.Zone))
		}
		if len(ips) == 0 {
			return nil, &net.DNSError{Err: "no addresses", Name: host, IsNotFound: true}
		}
	}
	// Refuse the name if any answer is refused: a name that resolves to a
	// public and a metadata address is an attack, not a fallback.
	for _, ip := range ips {
		if err := p.checkAddr(host, ip); err != nil {
			return nil, err
		}
	}
	d := p.Dialer
	if d == nil {
		d = &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}
	}
	var firstErr error
	tried := 0
	for _, ip := range ips {
		if (network == "tcp4" && !ip.Unmap().Is4()) || (network == "tcp6" && ip.Is4()) {
			continue
		}
		tried++
		c, err := d.DialContext(ctx, network, net.JoinHostPort(ip.String(), port))
		if err == nil {
			return c, nil
		}
		if firstErr == nil {
			firstErr = err
		}
		if ctx.Err() != nil {
			break
		}
	}
	if tried == 0 {
		return nil, fmt.Errorf("dial %s %s: no %s address", network, addr, network)
	}
	return nil, firstErr
}

// MaxHeaderBytes bounds the headers of a server's answer through
// [Policy.Transport] (net/http's default is 10 MB): no MCP or OAuth answer
// needs more, and a remote's session ID or nonce is sent back with every
// request.
const MaxHeaderBytes = 1 << 20

// Transport returns a RoundTripper that checks every request's URL with
// the policy and connects through [Policy.DialContext]. base is cloned
// (nil: a fresh transport with http.DefaultTransport's standard settings,
// never the process-wide DefaultTransport itself, which an embedder may
// have replaced with one that dials on its own); its proxy is dropped,
// because a proxy would resolve and connect on its own and so escape the
// dial-time check, and so is any DialTLSContext, for the same reason. base
// must not set the deprecated Dial or DialTLS hooks (no caller does):
// DialContext takes priority over Dial, but DialTLS would be used for
// https connections. Answers' headers are held to MaxHeaderBytes.
func (p Policy) Transport(base *http.Transport) http.RoundTripper {
	var t *http.Transport
	if base != nil {
		t = base.Clone()
	} else {
		t = &http.Transport{ForceAttemptHTTP2: true, MaxIdleConns: 100, IdleConnTimeout: 90 * time.Second,
			TLSHandshakeTimeout: 10 * time.Second, ExpectContinueTimeout: time.Second}
	}
	t.Proxy = nil
	if t.MaxResponseHeaderBytes <= 0 || t.MaxResponseHeaderBytes > MaxHeaderBytes {
		t.MaxResponseHeaderBytes = MaxHeaderBytes
	}
	t.DialTLSContext = nil
	t.DialContext = p.DialContext
	return &checkTransport{p: p, base: t}
}

type checkTransport struct {
	p    Policy
	base *http.Transport
}

func (t *checkTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if err := t.p.checkParsed(req.URL); err != nil {
		if req.Body != nil {
			req.Body.Close()
		}
		return nil, err
	}
	return t.base.RoundTrip(req)
}

// CloseIdleConnections closes the idle connections of the inner transport.
func (t *checkTransport) CloseIdleConnections() { t.base.CloseIdleConnections() }

// maxRedirects is how many redirects CheckRedirect follows (as net/http).
const maxRedirects = 10

// CheckRedirect is an http.Client.CheckRedirect that re-checks every
// redirect target with the policy (the dialer checks its address again
// when it connects) and stops after 10 redirects.
func (p Policy) CheckRedirect(req *http.Request, via []*http.Request) error {
	if len(via) >= maxRedirects {
		return fmt.Errorf("stopped after %d redirects", maxRedirects)
	}
	if err := p.checkParsed(req.URL); err != nil {
		return fmt.Errorf("redirect to %s: %w", req.URL.Redacted(), err)
	}
	return nil
}

// Client returns an HTTP client whose every connection, redirect included,
// is checked by p: the transport of [Policy.Transport] on base and
// [Policy.CheckRedirect].
func Client(p Policy, base *http.Transport) *http.Client {
	return &http.Client{Transport: p.Transport(base), CheckRedirect: p.CheckRedirect}
}

// MaxAnswerBytes bounds an HTTP answer that is not an event stream (a
// JSON-RPC message, an error page): the MCP SDK reads such a body whole,
// so a server that never ends one would fill the client's memory. It is
// the limit of a stdio server's message (mcp.DefaultMaxLineLength); an
// event stream is bounded per event by the SDK (mcp.DefaultMaxEventSize,
// as large).
const MaxAnswerBytes = 16 << 20

// ErrAnswerTooLarge is the read error of an answer past MaxAnswerBytes.
var ErrAnswerTooLarge = fmt.Errorf("server sent an answer over the %d MiB message limit", MaxAnswerBytes>>20)

// LimitAnswers returns a RoundTripper that holds every answer of base
// that is not an event stream to MaxAnswerBytes. sseGET: the legacy SSE
// transport's, whose GET is the session's stream whatever its
// Content-Type.
func LimitAnswers(base http.RoundTripper, sseGET bool) http.RoundTripper {
	return answerLimitTransport{base: base, sse: sseGET}
}

type answerLimitTransport struct {
	base http.RoundTripper
	sse  bool
}

func (t answerLimitTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(req)
	if err != nil || resp.Body == nil || t.sse && req.Method == http.MethodGet {
		return resp, err
	}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt != "text/event-stream" {
		resp.Body = &limitedBody{ReadCloser: resp.Body, left: MaxAnswerBytes}
	}
	return resp, nil
}

// limitedBody fails a read past left bytes with ErrAnswerTooLarge.
type limitedBody struct {
	io.ReadCloser
	left int64
}

func (b *limitedBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		var one [1]byte
		if n, err := b.ReadCloser.Read(one[:]); n > 0 {
			return 0, ErrAnswerTooLarge
		} else if err != nil {
			return 0, err
		}
		return 0, nil
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.ReadCloser.Read(p)
	b.left -= int64(n)
	return n, err
}

// Origin is the scheme and host of u, lower case, with the scheme's
// default port spelled out (https://x and https://x:443 are one origin),
// or "" when u has no scheme or host: where credentials written for a URL
// may go.
func Origin(u *url.URL) string {
	if u == nil || u.Scheme == "" || u.Host == "" {
		return ""
	}
	scheme, host := strings.ToLower(u.Scheme), strings.ToLower(u.Host)
	if u.Port() == "" {
		switch scheme {
		case "http":
			host += ":80"
		case "https":
			host += ":443"
		}
	}
	return scheme + "://" + host
}

// OriginOf is Origin of the URL raw, or "" when it does not parse.
func OriginOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return Origin(u)
}
