package proc

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

// forwarderFd is the sandbox helper's end of its forwarder socket: the
// helper sends the listeners it made in the server's network namespace
// over it, then closes it before the exec.
const forwarderFd = 5

// forwardedListener says what one listener sent by the helper is for:
// the proxy, or the stand-in for loopback destination To.
type forwardedListener struct {
	Proxy bool   `json:"proxy,omitempty"`
	To    string `json:"to,omitempty"`
}

// netForwarder is the supervisor's side of one sandboxed server's
// network: it receives the listeners, then relays through a netProxy
// until close (after the server and what it left are gone). A nil
// *netForwarder is a sandbox without an allow-list; its methods do
// nothing.
type netForwarder struct {
	child *os.File // the helper's end, ours to close once it is forked
	own   *os.File
	proxy *netProxy
	once  sync.Once
}

// newForwarder makes the forwarder of plan p, nil when p lists no
// destination.
func newForwarder(p *sandboxPlan) (*netForwarder, error) {
	if p.Network || len(p.Allow) == 0 {
		return nil, nil
	}
	allow, err := parseAllow(p.Allow)
	if err != nil {
		return nil, err
	}
	user, err := parseAllow(p.AllowUser)
	if err != nil {
		return nil, err
	}
	np := newNetProxy(allow, p.AllowPrivate, user...)
	np.upstream = p.Proxy
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("the network forwarder's socket: %w", err)
	}
	return &netForwarder{
		own:   os.NewFile(uintptr(fds[0]), "forwarder"),
		child: os.NewFile(uintptr(fds[1]), "forwarder-helper"),
		proxy: np,
	}, nil
}

// forked is called once the helper was forked (ok) or could not be:
// our copy of its end goes, and the forwarder waits for its listeners.
func (f *netForwarder) forked(ok bool, idle func()) {
	if f == nil {
		return
	}
	f.child.Close()
	if !ok {
		f.close()
		return
	}
	f.proxy.idle = idle
	go f.receive()
}

// receive takes the helper's one message: what each listener is for, and
// the listeners. A helper that died first sends nothing (EOF).
func (f *netForwarder) receive() {
	c, err := net.FileConn(f.own)
	if err != nil {
		return
	}
	if !f.proxy.track(c) {
		c.Close()
		return
	}
	defer f.proxy.untrack(c)
	defer c.Close()
	uc, ok := c.(*net.UnixConn)
	if !ok {
		return
	}
	buf := make([]byte, 16<<10)
	oob := make([]byte, unix.CmsgSpace(64*4))
	n, oobn, _, _, err := uc.ReadMsgUnix(buf, oob)
	if err != nil || n == 0 {
		return
	}
	files, _ := parseRights(oob[:oobn])
	var roles []forwardedListener
	if json.Unmarshal(buf[:n], &roles) != nil || len(roles) != len(files) {
		closeAll(files)
		return
	}
	for i, fl := range files {
		ln, err := net.FileListener(fl)
		fl.Close()
		if err != nil {
			continue
		}
		if roles[i].Proxy {
			go f.proxy.serve(ln, nil)
			continue
		}
		to, err := parseTarget(roles[i].To, 0)
		if err != nil || !f.proxy.allow[to] || !to.loopback() {
			ln.Close()
			continue
		}
		go f.proxy.serve(ln, &to)
	}
}

// close ends the listeners and every relayed connection. Idempotent.
func (f *netForwarder) close() {
	if f == nil {
		return
	}
	f.once.Do(func() {
		f.child.Close() // closed already once forked; not if it never was
		f.own.Close()
		f.proxy.close()
	})
}

// collectIdle is the forwarder's idle hook: garbage made by relayed
// connections is collected as the supervisor's own is (see
// collectGarbage), never while a fork is under way.
func (sv *supState) collectIdle() {
	sv.mu.Lock()
	if !sv.spawning {
		collectGarbage()
	}
	sv.mu.Unlock()
}

// openNetwork runs in the sandbox helper, in the server's network
// namespace once loopback is up: it listens there for the proxy (an
// ephemeral port on 127.0.0.1, kept in p.proxyPort for the server's
// environment) and, when private destinations are allowed, on each
// listed loopback destination's own address, and sends the listeners to
// the supervisor over forwarderFd, which it then closes.
func (p *sandboxPlan) openNetwork() error {
	allow, err := parseAllow(p.Allow)
	if err != nil {
		return err
	}
	var roles []forwardedListener
	var fds []int
	defer func() {
		for _, fd := range fds {
			unix.Close(fd)
		}
	}()
	{
		// One listener per address inside: "localhost:80" and
		// "127.0.0.1:80" share theirs (the first listed is dialled).
		// Only where a loopback destination may be reached: private
		// ones allowed, or one the user configured.
		bound := map[netip.AddrPort]bool{}
		for _, t := range allow {
			if !p.AllowPrivate && !slices.Contains(p.AllowUser, t.String()) {
				continue
			}
			var addrs []netip.Addr
			best := false // localhost's ::1 only where the namespace has IPv6
			switch a, ok := t.addr(); {
			case ok && a.IsLoopback():
				addrs = []netip.Addr{a}
			case t.host == "localhost":
				addrs, best = []netip.Addr{netip.AddrFrom4([4]byte{127, 0, 0, 1}), netip.IPv6Loopback()}, true
			}
			for i, a := range addrs {
				if bound[netip.AddrPortFrom(a, t.port)] {
					continue
				}
				bound[netip.AddrPortFrom(a, t.port)] = true
				fd, _, err := listenAt(netip.AddrPortFrom(a, t.port))
				if err != nil {
					if best && i > 0 {
						continue
					}
					return fmt.Errorf("listening on %s for %s: %w", netip.AddrPortFrom(a, t.port), t, err)
				}
				fds, roles = append(fds, fd), append(roles, forwardedListener{To: t.String()})
			}
		}
	}
	// The proxy last: the port the kernel picks for it cannot then be a
	// listed one.
	fd, port, err := listenAt(netip.AddrPortFrom(netip.AddrFrom4([4]byte{127, 0, 0, 1}), 0))
	if err != nil {
		return fmt.Errorf("the proxy's listener: %w", err)
	}
	fds, roles = append(fds, fd), append(roles, forwardedListener{Proxy: true})
	p.proxyPort = port
	msg, _ := json.Marshal(roles)
	if err := unix.Sendmsg(forwarderFd, msg, unix.UnixRights(fds...), nil, 0); err != nil {
		return fmt.Errorf("sending the listeners to the supervisor: %w", err)
	}
	unix.Close(forwarderFd)
	return nil
}

// listenAt listens on ap (port 0: one the kernel picks) and returns the
// socket and its port.
func listenAt(ap netip.AddrPort) (int, uint16, error) {
	family := unix.AF_INET6
	var sa unix.Sockaddr = &unix.SockaddrInet6{Port: int(ap.Port()), Addr: ap.Addr().As16()}
	if ap.Addr().Is4() {
		family = unix.AF_INET
		sa = &unix.SockaddrInet4{Port: int(ap.Port()), Addr: ap.Addr().As4()}
	}
	fd, err := unix.Socket(family, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return -1, 0, err
	}
	if family == unix.AF_INET6 {
		unix.SetsockoptInt(fd, unix.IPPROTO_IPV6, unix.IPV6_V6ONLY, 1)
	}
	if err := unix.Bind(fd, sa); err != nil {
		unix.Close(fd)
		return -1, 0, err
	}
	if err := unix.Listen(fd, 128); err != nil {
		unix.Close(fd)
		return -1, 0, err
	}
	got, err := unix.Getsockname(fd)
	if err != nil {
		unix.Close(fd)
		return -1, 0, err
	}
	switch a := got.(type) {
	case *unix.SockaddrInet4:
		return fd, uint16(a.Port), nil
	case *unix.SockaddrInet6:
		return fd, uint16(a.Port), nil
	}
	unix.Close(fd)
	return -1, 0, errors.New("an unexpected socket address")
}

// proxyEnv points a sandboxed server's proxy variables (upper and lower
// case: curl reads only http_proxy in lower case) at the proxy on port,
// replacing the user's own (a proxy outside is out of reach), and sends
// loopback destinations direct: a listed one is forwarded at its own
// address, any other is refused there. NODE_USE_ENV_PROXY makes Node
// (24 and later) use them for its own http and fetch.
func proxyEnv(env []string, port uint16) []string {
	url := "http://127.0.0.1:" + strconv.Itoa(int(port))
	set := map[string]string{"NODE_USE_ENV_PROXY": "1"}
	for _, k := range []string{"HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"} {
		set[k], set[strings.ToLower(k)] = url, url
	}
	set["NO_PROXY"], set["no_proxy"] = "localhost,127.0.0.1,::1", "localhost,127.0.0.1,::1"
	out := env[:0]
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		if _, ok := set[k]; !ok {
			out = append(out, kv)
		}
	}
	for _, k := range []string{"HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "all_proxy", "no_proxy", "NODE_USE_ENV_PROXY"} {
		out = append(out, k+"="+set[k])
	}
	return out
}
