package proc

import (
	"bufio"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/netguard"
)

// The network forwarder of a sandbox with an allow-list (Sandbox.Allow):
// the server's own network namespace has only loopback, and the
// supervisor, which lives in the host's network, holds listening sockets
// made in that namespace by the sandbox helper. One is an HTTP proxy
// (CONNECT, and absolute-form http:// requests), which the server's
// HTTP_PROXY, HTTPS_PROXY and ALL_PROXY name; the others stand, at the
// same address inside, for each listed loopback destination, so that a
// program that ignores the proxy variables still reaches those. The
// supervisor dials only listed destinations, resolving names itself and
// judging every address with internal/netguard.

const (
	// proxyHeadLimit bounds a proxy request's head (request line and
	// header); proxyHeadWait is how long a connection may take to send it.
	proxyHeadLimit = 64 << 10
	proxyHeadWait  = 30 * time.Second
	// proxyDialWait bounds the connection to a listed destination.
	proxyDialWait = 15 * time.Second
	// proxyConns bounds the connections one sandbox relays at once.
	proxyConns = 512
)

// target is a destination, canonical: a host name in lower case without
// a trailing dot, or an address in its standard form; and a port.
type target struct {
	host string
	port uint16
}

func (t target) String() string { return net.JoinHostPort(t.host, strconv.Itoa(int(t.port))) }

// addr is the target's address, when its host is one.
func (t target) addr() (netip.Addr, bool) {
	a, err := netip.ParseAddr(t.host)
	return a, err == nil
}

// loopback reports whether the target is on the host's loopback:
// "localhost" or a loopback address.
func (t target) loopback() bool {
	if t.host == "localhost" {
		return true
	}
	a, ok := t.addr()
	return ok && a.IsLoopback()
}

// parseTarget reads a destination as an allow-list entry or a proxy
// request names it: "host:port" or "[v6]:port". An address may be written
// in any spelling netguard.ParseHost knows (2130706433 is 127.0.0.1), and
// is kept in standard form, so that one destination has one spelling;
// names are letters, digits, '-', '_' and '.' only. defaultPort, if not
// zero, is the port of a destination written without one.
func parseTarget(s string, defaultPort uint16) (target, error) {
	bad := func(why string) (target, error) {
		return target{}, fmt.Errorf("%q %s", s, why)
	}
	if len(s) > 300 {
		return bad("is too long")
	}
	host, port := s, ""
	if strings.HasPrefix(s, "[") {
		end := strings.IndexByte(s, ']')
		if end < 0 {
			return bad("has no closing ]")
		}
		host, port = s[1:end], s[end+1:]
		if port != "" && port[0] != ':' {
			return bad(`is not "host:port"`)
		}
		a, err := netip.ParseAddr(host)
		if err != nil || !a.Is6() || a.Zone() != "" {
			return bad("has no IPv6 address between [ and ]")
		}
		port = strings.TrimPrefix(port, ":")
	} else if i := strings.LastIndexByte(s, ':'); i >= 0 {
		host, port = s[:i], s[i+1:]
		if strings.Contains(host, ":") {
			return bad("is an IPv6 address without [ ]")
		}
	}
	if port == "" && (defaultPort == 0 || strings.HasSuffix(s, ":")) {
		return bad("has no port")
	}
	t := target{port: defaultPort}
	if port != "" {
		if len(port) > 5 || strings.Trim(port, "0123456789") != "" {
			return bad("has no port number between 1 and 65535")
		}
		n, _ := strconv.Atoi(port)
		if n < 1 || n > 65535 {
			return bad("has no port number between 1 and 65535")
		}
		t.port = uint16(n)
	}
	host = strings.ToLower(host)
	if a, ok := netguard.ParseHost(host); ok {
		if a.Zone() != "" {
			return bad("names an address with a zone")
		}
		t.host = a.Unmap().String()
		return t, nil
	}
	host = strings.TrimSuffix(host, ".")
	if host == "" || len(host) > 253 {
		return bad("has no host name")
	}
	for _, label := range strings.Split(host, ".") {
		if label == "" || len(label) > 63 || strings.Trim(label, "abcdefghijklmnopqrstuvwxyz0123456789-_") != "" {
			return bad("has no valid host name")
		}
	}
	t.host = host
	return t, nil
}

// parseAllow reads an allow-list: the canonical targets.
func parseAllow(list []string) ([]target, error) {
	out := make([]target, 0, len(list))
	for _, s := range list {
		t, err := parseTarget(s, 0)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, nil
}

// netProxy relays a sandbox's connections to the listed destinations.
// It is safe for concurrent use; close ends every listener and relay.
type netProxy struct {
	allow map[target]bool
	// dial connects to a listed destination: netguard's dialer under the
	// server's policy (a test may replace it).
	dial  func(ctx context.Context, network, addr string) (net.Conn, error)
	slots chan struct{}
	idle  func() // after each connection, if set (the supervisor collects garbage)
	// upstream, if set, is the user's own proxy (see ProxyConfig): judge
	// checks a target before it is asked for through it, dialProxy
	// connects to it.
	upstream  *ProxyConfig
	judge     func(ctx context.Context, t target) error
	dialProxy func(ctx context.Context, network, addr string) (net.Conn, error)

	mu     sync.Mutex
	closed bool
	open   map[io.Closer]bool // listeners and connections
}

// ProxyConfig is the user's own HTTP proxy (from their environment:
// HTTPS_PROXY, HTTP_PROXY, NO_PROXY, read as net/http's
// ProxyFromEnvironment reads them), through which a sandbox's relay
// reaches the destinations it allows, as every other program of the
// user's does. Loopback destinations are always reached directly.
type ProxyConfig struct {
	HTTPProxy  string `json:"httpProxy,omitempty"`
	HTTPSProxy string `json:"httpsProxy,omitempty"`
	NoProxy    string `json:"noProxy,omitempty"`
}

// via is the proxy to reach t through (tls: the tunnel of a CONNECT), nil
// for a direct connection: loopback, a proxy that is not http://, or a
// destination NO_PROXY names.
//
// It decides as net/http's ProxyFromEnvironment (golang.org/x/net's
// httpproxy) does for the destinations a relay has — canonical ASCII names
// and addresses (parseTarget) — without linking a second copy of that
// package and its IDNA tables: TestProxyViaAgrees and FuzzProxyVia hold
// the two to the same answers. The one difference: a NO_PROXY entry
// written in Unicode is not converted to its xn-- form, so it names no
// destination (write it as xn--…).
func (c *ProxyConfig) via(t target, tls bool) *url.URL {
	if c == nil || t.loopback() {
		return nil
	}
	raw := c.HTTPProxy
	if tls {
		raw = c.HTTPSProxy
	}
	u := proxyURL(raw)
	if u == nil || u.Scheme != "http" || noProxy(c.NoProxy, t) {
		return nil
	}
	return u
}

// proxyURL reads a proxy variable's value: a URL, or a bare "host:port"
// taken as http://host:port; nil when it is empty or unreadable.
func proxyURL(raw string) *url.URL {
	if raw == "" {
		return nil
	}
	u, err := url.Parse(raw)
	if err != nil || u.Scheme == "" || u.Host == "" {
		if bare, err := url.Parse("http://" + raw); err == nil {
			return bare
		}
	}
	if err != nil {
		return nil
	}
	return u
}

// noProxy reports whether the NO_PROXY list names t: a comma-separated
// list of "*" (everything), CIDR prefixes, addresses and domain names,
// each address or name with an optional port ("[v6]:port" for an IPv6
// address). A name matches itself and its subdomains ("corp.example",
// ".corp.example" and "*.corp.example" all match a.corp.example; only the
// first matches corp.example itself); an address or prefix matches only a
// destination given as an address, a name only one given as a name.
func noProxy(list string, t target) bool {
	var ip net.IP
	if a, ok := t.addr(); ok {
		ip = net.IP(a.AsSlice())
	}
	port := strconv.Itoa(int(t.port))
	for _, e := range strings.Split(list, ",") {
		e = strings.ToLower(strings.TrimSpace(e))
		if e == "" {
			continue
		}
		if e == "*" {
			return true
		}
		if _, prefix, err := net.ParseCIDR(e); err == nil {
			if ip != nil && prefix.Contains(ip) {
				return true
			}
			continue
		}
		host, ePort, err := net.SplitHostPort(e)
		switch {
		case err != nil:
			host, ePort = e, ""
		case host == "":
			continue // ":80": no host, not an entry
		case host[0] == '[' && host[len(host)-1] == ']':
			host = host[1 : len(host)-1]
		}
		portOK := ePort == "" || ePort == port
		if eIP := net.ParseIP(host); eIP != nil {
			if ip != nil && eIP.Equal(ip) && portOK {
				return true
			}
			continue
		}
		if host == "" || ip != nil {
			continue
		}
		if strings.HasPrefix(host, "*.") {
			host = host[1:]
		}
		if !strings.HasPrefix(host, ".") {
			// "corp.example": itself, or what ends in ".corp.example".
			if t.host == host && portOK {
				return true
			}
			host = "." + host
		}
		if strings.HasSuffix(t.host, host) && portOK {
			return true
		}
	}
	return false
}

// newNetProxy relays to allow under netguard's rules: private and
// loopback addresses only with allowPrivate, or for a destination the user
// configured (user); metadata and link-local addresses never.
func newNetProxy(allow []target, allowPrivate bool, user ...target) *netProxy {
	policy := func(private bool) func(ctx context.Context, network, addr string) (net.Conn, error) {
		pol := netguard.Policy{
			AllowPrivate: private,
			Hint:         "project-scope servers may not reach private addresses; to allow it, set \"allowPrivateNetworkForProjectServers\": true in your user settings",
			Dialer:       &net.Dialer{Timeout: proxyDialWait, KeepAlive: 30 * time.Second},
		}
		return pol.DialContext
	}
	strict, private := policy(allowPrivate), policy(true)
	users := map[string]bool{}
	for _, t := range user {
		users[t.String()] = true
	}
	np := &netProxy{allow: map[target]bool{}, slots: make(chan struct{}, proxyConns), open: map[io.Closer]bool{}}
	np.dial = func(ctx context.Context, network, addr string) (net.Conn, error) {
		if users[addr] {
			return private(ctx, network, addr)
		}
		return strict(ctx, network, addr)
	}
	// Through the user's proxy the proxy resolves and connects: the
	// target is judged here first, by its addresses as this machine
	// resolves them (a name that does not resolve here passes only if
	// the user configured it), and the proxy, which the user configured,
	// is reached whatever its address (but metadata and link-local).
	np.judge = func(ctx context.Context, t target) error {
		if users[t.String()] {
			return nil
		}
		pol := netguard.Policy{AllowPrivate: allowPrivate, Hint: "project-scope servers may not reach private addresses; to allow it, set \"allowPrivateNetworkForProjectServers\": true in your user settings"}
		if a, ok := t.addr(); ok {
			return pol.CheckAddr(t.host, a)
		}
		answers, err := net.DefaultResolver.LookupIPAddr(ctx, t.host)
		if err != nil {
			return &netguard.RefusedError{Reason: t.host + " does not resolve here, so its address cannot be judged before your proxy connects to it"}
		}
		for _, a := range answers {
			if ip, ok := netip.AddrFromSlice(a.IP); ok {
				if err := pol.CheckAddr(t.host, ip.Unmap()); err != nil {
					return err
				}
			}
		}
		return nil
	}
	np.dialProxy = private
	for _, t := range allow {
		np.allow[t] = true
	}
	return np
}

// track adds c to what close ends; false if closed already.
func (np *netProxy) track(c io.Closer) bool {
	np.mu.Lock()
	defer np.mu.Unlock()
	if np.closed {
		return false
	}
	np.open[c] = true
	return true
}

func (np *netProxy) untrack(c io.Closer) {
	np.mu.Lock()
	delete(np.open, c)
	np.mu.Unlock()
}

// close ends every listener and connection. Idempotent.
func (np *netProxy) close() {
	np.mu.Lock()
	np.closed = true
	open := np.open
	np.open = map[io.Closer]bool{}
	np.mu.Unlock()
	for c := range open {
		c.Close()
	}
}

// serve accepts on ln until it is closed: as the proxy when to is nil,
// else as the stand-in for loopback destination *to.
func (np *netProxy) serve(ln net.Listener, to *target) {
	if !np.track(ln) {
		ln.Close()
		return
	}
	defer np.untrack(ln)
	for {
		c, err := ln.Accept()
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			if errors.Is(err, net.ErrClosed) {
				return
			}
			time.Sleep(50 * time.Millisecond) // EMFILE and the like: do not spin
			continue
		}
		select {
		case np.slots <- struct{}{}:
		default: // too many at once: refused, as a full backlog would be
			reset(c)
			continue
		}
		go func() {
			defer func() {
				<-np.slots
				if np.idle != nil {
					np.idle()
				}
			}()
			if !np.track(c) {
				c.Close()
				return
			}
			defer np.untrack(c)
			if to != nil {
				np.forward(c, *to)
			} else {
				np.handle(c)
			}
		}()
	}
}

// reset closes c with a reset: the client's read or write fails
// (ECONNRESET), as for a port nothing listens on.
func reset(c net.Conn) {
	if tc, ok := c.(*net.TCPConn); ok {
		tc.SetLinger(0)
	}
	c.Close()
}

// forward relays c, accepted at loopback destination to inside the
// sandbox, to the same destination outside.
func (np *netProxy) forward(c net.Conn, to target) {
	if !np.allow[to] {
		reset(c)
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), proxyDialWait)
	up, err := np.dial(ctx, "tcp", to.String())
	cancel()
	if err != nil {
		reset(c)
		return
	}
	np.relay(c, up, nil)
}

// handle serves one proxy connection: one request, then the tunnel
// (CONNECT) or the one response (an absolute-form http:// request).
func (np *netProxy) handle(c net.Conn) {
	defer c.Close()
	c.SetReadDeadline(time.Now().Add(proxyHeadWait))
	lr := &io.LimitedReader{R: c, N: proxyHeadLimit}
	br := bufio.NewReader(lr)
	req, t, code, msg := np.readRequest(br)
	if code != 0 {
		refuse(c, code, msg)
		return
	}
	tunnel := req.Method == http.MethodConnect
	ctx, cancel := context.WithTimeout(context.Background(), proxyDialWait)
	up, via, err := np.connect(ctx, t, tunnel)
	cancel()
	if err != nil {
		if re := (*netguard.RefusedError)(nil); errors.As(err, &re) {
			refuse(c, http.StatusForbidden, "switchboard sandbox: "+t.String()+": "+err.Error())
		} else {
			refuse(c, http.StatusBadGateway, "switchboard sandbox: connecting to "+t.String()+": "+err.Error())
		}
		return
	}
	np.track(up)
	defer np.untrack(up)
	c.SetReadDeadline(time.Time{})
	lr.N = math.MaxInt64 // a request body, or the tunnel, is not the head
	if req.Method == http.MethodConnect {
		if _, err := io.WriteString(c, "HTTP/1.1 200 Connection established\r\n\r\n"); err != nil {
			up.Close()
			return
		}
		np.relay(c, up, br)
		return
	}
	defer up.Close()
	for _, h := range []string{"Proxy-Connection", "Proxy-Authorization", "Proxy-Authenticate"} {
		req.Header.Del(h)
	}
	req.Close = true // one request per connection: the next may be for another host
	write := req.Write
	if via != nil { // to the user's proxy: the absolute form, and its credentials
		if u := via.User; u != nil {
			pw, _ := u.Password()
			req.Header.Set("Proxy-Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(u.Username()+":"+pw)))
		}
		write = req.WriteProxy
	}
	if err := write(up); err != nil {
		refuse(c, http.StatusBadGateway, "switchboard sandbox: sending to "+t.String()+": "+err.Error())
		return
	}
	resp, err := http.ReadResponse(bufio.NewReader(up), req)
	if err != nil {
		refuse(c, http.StatusBadGateway, "switchboard sandbox: reading from "+t.String()+": "+err.Error())
		return
	}
	resp.Close = true
	resp.Write(c)
	resp.Body.Close()
}

// connect reaches listed destination t: directly, or, where the user's
// proxy is to be used for it, through that proxy (judged first), with a
// CONNECT when tunnel is set (the connection is then the tunnel), else
// the proxy itself (via is it: the request goes to it in absolute form).
func (np *netProxy) connect(ctx context.Context, t target, tunnel bool) (c net.Conn, via *url.URL, err error) {
	via = np.upstream.via(t, tunnel)
	if via == nil {
		c, err = np.dial(ctx, "tcp", t.String())
		return c, nil, err
	}
	if err := np.judge(ctx, t); err != nil {
		return nil, nil, err
	}
	port := via.Port()
	if port == "" {
		port = "80"
	}
	c, err = np.dialProxy(ctx, "tcp", net.JoinHostPort(via.Hostname(), port))
	if err != nil {
		return nil, nil, fmt.Errorf("your proxy %s: %w", via.Host, err)
	}
	if !tunnel {
		return c, via, nil
	}
	if dl, ok := ctx.Deadline(); ok {
		c.SetDeadline(dl)
	}
	head := "CONNECT " + t.String() + " HTTP/1.1\r\nHost: " + t.String() + "\r\n"
	if u := via.User; u != nil {
		pw, _ := u.Password()
		head += "Proxy-Authorization: Basic " + base64.StdEncoding.EncodeToString([]byte(u.Username()+":"+pw)) + "\r\n"
	}
	if _, err := io.WriteString(c, head+"\r\n"); err != nil {
		c.Close()
		return nil, nil, fmt.Errorf("your proxy %s: %w", via.Host, err)
	}
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect})
	if err != nil {
		c.Close()
		return nil, nil, fmt.Errorf("your proxy %s: %w", via.Host, err)
	}
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		c.Close()
		return nil, nil, fmt.Errorf("your proxy %s refused %s: %s", via.Host, t, resp.Status)
	}
	c.SetDeadline(time.Time{})
	if br.Buffered() > 0 { // what the destination sent already
		return &bufferedConn{Conn: c, r: br}, via, nil
	}
	return c, via, nil
}

// bufferedConn is a connection whose first bytes were read into r.
type bufferedConn struct {
	net.Conn
	r *bufio.Reader
}

func (c *bufferedConn) Read(p []byte) (int, error) { return c.r.Read(p) }

// CloseWrite half-closes the connection, as relay does to pass an EOF on.
func (c *bufferedConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return c.Conn.Close()
}

// readRequest reads a proxy request's head and says where it goes; code
// is non-zero (and msg the reason) for a request the proxy refuses.
func (np *netProxy) readRequest(br *bufio.Reader) (req *http.Request, t target, code int, msg string) {
	req, err := http.ReadRequest(br)
	if err != nil {
		return nil, t, http.StatusBadRequest, "switchboard sandbox: not an HTTP proxy request"
	}
	switch {
	case req.Method == http.MethodConnect:
		t, err = parseTarget(req.RequestURI, 0)
	case req.URL.Scheme == "http" && req.URL.Host != "" && req.URL.Opaque == "":
		t, err = parseTarget(req.URL.Host, 80)
	default:
		return nil, t, http.StatusBadRequest, "switchboard sandbox: this proxy takes CONNECT host:port, or an absolute http:// URL"
	}
	if err != nil {
		return nil, t, http.StatusBadRequest, "switchboard sandbox: " + err.Error()
	}
	if !np.allow[t] {
		return nil, t, http.StatusForbidden, "switchboard sandbox: " + t.String() + " is not in this server's network allow-list"
	}
	return req, t, 0, ""
}

// refuse answers a proxy request that is not relayed.
func refuse(c net.Conn, code int, msg string) {
	msg += "\n"
	fmt.Fprintf(c, "HTTP/1.1 %d %s\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s",
		code, http.StatusText(code), len(msg), msg)
}

// relay copies between c and up both ways until both are done, what br
// holds already first, then closes both.
func (np *netProxy) relay(c, up net.Conn, br *bufio.Reader) {
	if br != nil && br.Buffered() > 0 {
		b, _ := br.Peek(br.Buffered())
		if _, err := up.Write(b); err != nil {
			c.Close()
			up.Close()
			return
		}
	}
	np.track(up)
	defer np.untrack(up)
	done := make(chan struct{})
	half := func(dst, src net.Conn) {
		io.Copy(dst, src)
		if cw, ok := dst.(interface{ CloseWrite() error }); ok {
			cw.CloseWrite()
		} else {
			dst.Close()
		}
	}
	go func() {
		half(up, c)
		close(done)
	}()
	half(c, up)
	<-done
	c.Close()
	up.Close()
}
