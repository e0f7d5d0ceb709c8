package netguard

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

func TestCheckURLSpellings(t *testing.T) {
	tests := []struct {
		url string
		// wantProject/wantUser: "" = allowed, else a substring of the error.
		wantProject, wantUser string
	}{
		{"https://api.example.com/mcp", "", ""},
		{"http://93.184.216.34/", "", ""},
		{"HTTPS://EXAMPLE.COM/", "", ""},
		{"http://169.254.169.254/", "169.254.169.254 is a cloud metadata address", "169.254.169.254 is a cloud metadata address"},
		{"http://169.254.169.254./latest", "cloud metadata", "cloud metadata"},
		{"http://[::ffff:169.254.169.254]/", "::ffff:169.254.169.254 (169.254.169.254) is a cloud metadata address", "cloud metadata"},
		{"http://[::ffff:a9fe:a9fe]/", "cloud metadata", "cloud metadata"},
		{"http://[64:ff9b::a9fe:a9fe]/", "cloud metadata", "cloud metadata"},
		{"http://[2002:a9fe:a9fe::1]/", "cloud metadata", "cloud metadata"},
		{"http://[::169.254.169.254]/", "cloud metadata", "cloud metadata"},
		{"http://2852039166/", "2852039166 (169.254.169.254) is a cloud metadata address", "cloud metadata"},
		{"http://0251.0376.0251.0376/", "(169.254.169.254) is a cloud metadata address", "cloud metadata"},
		{"http://0xa9fea9fe/", "(169.254.169.254) is a cloud metadata address", "cloud metadata"},
		{"http://0XA9FEA9FE/", "cloud metadata", "cloud metadata"},
		{"http://0xa9.0xfe.0xa9.0xfe/", "cloud metadata", "cloud metadata"},
		{"http://169.254.43518/", "cloud metadata", "cloud metadata"},
		{"http://169.16689662/", "cloud metadata", "cloud metadata"},
		{"http://00000251.254.169.254/", "cloud metadata", "cloud metadata"},
		{"http://[fd00:ec2::254]/", "cloud metadata", "cloud metadata"},
		{"http://100.100.100.200/", "cloud metadata", "cloud metadata"},
		{"http://169.254.170.2/v2/credentials", "cloud metadata", "cloud metadata"},
		{"http://metadata.google.internal/computeMetadata/v1/", "cloud metadata host name", "cloud metadata host name"},
		{"http://METADATA.google.internal./", "cloud metadata host name", "cloud metadata host name"},
		{"http://metadata/", "cloud metadata host name", "cloud metadata host name"},
		{"http://169.254.1.1/", "is a link-local address", "is a link-local address"},
		{"http://[fe80::1]/", "is a link-local address", "is a link-local address"},
		{"http://[fe80::1%25eth0]/", "is a link-local address", "is a link-local address"},
		{"http://127.0.0.1:8080/mcp", "127.0.0.1 is a loopback address", ""},
		{"http://2130706433/", "2130706433 (127.0.0.1) is a loopback address", ""},
		{"http://0x7f.1/", "loopback", ""},
		{"http://017700000001/", "loopback", ""},
		{"http://[::1]/", "::1 is a loopback address", ""},
		{"http://[::ffff:127.0.0.1]/", "loopback", ""},
		{"http://localhost:3000/", "localhost is a loopback host name", ""},
		{"http://api.localhost/", "loopback host name", ""},
		{"http://10.1.2.3/", "10.1.2.3 is a private address", ""},
		{"http://172.16.0.1/", "private address", ""},
		{"http://192.168.1.1/", "private address", ""},
		{"http://[fd12::1]/", "private address", ""},
		{"http://100.64.0.1/", "shared (CGNAT) address", ""},
		{"http://0.0.0.0/", "unspecified address", ""},
		{"http://0/", "unspecified address", ""},
		{"http://[::]/", "unspecified address", ""},
		{"http://224.0.0.1/", "multicast address", ""},
		{"http://255.255.255.255/", "broadcast address", ""},
		{"http://240.0.0.1/", "reserved address", ""},
		{"http://192.0.2.1/", "reserved address", ""},
		{"ftp://example.com/", "ftp:// URLs are not allowed", "ftp:// URLs are not allowed"},
		{"file:///etc/passwd", "file:// URLs are not allowed", "file:// URLs are not allowed"},
		{"gopher://127.0.0.1:6379/", "gopher:// URLs are not allowed", "gopher://"},
		{"example.com/mcp", "has no scheme", "has no scheme"},
		{"http:///nohost", "no host", "no host"},
		{"http://%zz/", "invalid URL", "invalid URL"},
	}
	project := Policy{Hint: "HINT"}
	user := Policy{AllowPrivate: true}
	for _, tt := range tests {
		t.Run(tt.url, func(t *testing.T) {
			check := func(p Policy, want string) {
				t.Helper()
				err := p.CheckURL(tt.url)
				switch {
				case want == "" && err != nil:
					t.Errorf("AllowPrivate=%v: refused: %v", p.AllowPrivate, err)
				case want != "" && err == nil:
					t.Errorf("AllowPrivate=%v: allowed, want an error with %q", p.AllowPrivate, want)
				case want != "" && !strings.Contains(err.Error(), want):
					t.Errorf("AllowPrivate=%v: error %q does not say %q", p.AllowPrivate, err, want)
				}
			}
			check(project, tt.wantProject)
			check(user, tt.wantUser)
			if got, want := CheckURL(tt.url) == nil, tt.wantUser == ""; got != want {
				t.Errorf("package CheckURL allowed=%v, want %v", got, want)
			}
		})
	}
	err := project.CheckURL("http://127.0.0.1/")
	if !errors.Is(err, ErrRefused) || !strings.HasPrefix(err.Error(), "refused: ") || !strings.HasSuffix(err.Error(), "; HINT") {
		t.Errorf("private refusal = %v; want errors.Is ErrRefused, prefix \"refused: \" and the policy's hint", err)
	}
}

func TestParseHost(t *testing.T) {
	tests := []struct {
		host string
		want string // "" = not an address
	}{
		{"169.254.169.254", "169.254.169.254"},
		{"2852039166", "169.254.169.254"},
		{"0251.0376.0251.0376", "169.254.169.254"},
		{"0xa9fea9fe", "169.254.169.254"},
		{"0xA9.254.0251.0xfe", "169.254.169.254"},
		{"169.254.43518", "169.254.169.254"},
		{"127.1", "127.0.0.1"},
		{"0x", "0.0.0.0"},
		{"1.2.3.4.", "1.2.3.4"},
		{"::ffff:169.254.169.254", "::ffff:169.254.169.254"},
		{"[::1]", "::1"},
		{"4294967295", "255.255.255.255"},
		{"4294967296", ""},
		{"256.1.1.1", ""},
		{"1.2.3.4.5", ""},
		{"1.2.3.", "1.2.0.3"},
		{"1..2", ""},
		{"09.1.1.1", ""},
		{"example.com", ""},
		{"1.2.3.com", ""},
		{"", ""},
		{".", ""},
	}
	for _, tt := range tests {
		ip, ok := ParseHost(tt.host)
		got := ""
		if ok {
			got = ip.String()
		}
		if got != tt.want {
			t.Errorf("ParseHost(%q) = %q, want %q", tt.host, got, tt.want)
		}
	}
}

// fakeResolver answers from a table; each name's answers are used in turn
// (the last one repeats), as a DNS server that changes its answer would.
type fakeResolver struct {
	mu      sync.Mutex
	answers map[string][][]string
	calls   map[string]int
}

func newResolver(answers map[string][][]string) *fakeResolver {
	return &fakeResolver{answers: answers, calls: map[string]int{}}
}

func (r *fakeResolver) LookupIPAddr(_ context.Context, host string) ([]net.IPAddr, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	seq, ok := r.answers[host]
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	n := r.calls[host]
	r.calls[host]++
	if n >= len(seq) {
		n = len(seq) - 1
	}
	var out []net.IPAddr
	for _, s := range seq[n] {
		out = append(out, net.IPAddr{IP: net.ParseIP(s)})
	}
	return out, nil
}

func (r *fakeResolver) count(host string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.calls[host]
}

// loopbackServer is a real HTTP server on 127.0.0.1 that counts requests.
type loopbackServer struct {
	*httptest.Server
	hits atomic.Int64
	port string
}

func startServer(t *testing.T, h http.HandlerFunc) *loopbackServer {
	t.Helper()
	s := &loopbackServer{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.hits.Add(1)
		if h != nil {
			h(w, r)
			return
		}
		fmt.Fprint(w, "hello from loopback")
	}))
	t.Cleanup(s.Close)
	_, s.port, _ = net.SplitHostPort(s.Listener.Addr().String())
	return s
}

func get(t *testing.T, c *http.Client, url string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, "GET", url, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return string(b), err
}

func TestDialerPolicies(t *testing.T) {
	srv := startServer(t, nil)
	res := newResolver(map[string][][]string{
		"loop.test":      {{"127.0.0.1"}},
		"localhost":      {{"127.0.0.1"}},
		"meta.test":      {{"169.254.169.254"}},
		"mapped.test":    {{"::ffff:169.254.169.254"}},
		"mixed.test":     {{"127.0.0.1", "169.254.169.254"}},
		"private.test":   {{"10.0.0.7"}},
		"linklocal.test": {{"fe80::1"}},
	})
	project := Client(Policy{Resolver: res}, nil)
	user := Client(Policy{AllowPrivate: true, Resolver: res}, nil)
	at := func(host string) string { return "http://" + net.JoinHostPort(host, srv.port) + "/" }

	tests := []struct {
		host                  string
		wantProject, wantUser string // "" = the loopback server answers
	}{
		{"127.0.0.1", "127.0.0.1 is a loopback address", ""},
		{"2130706433", "loopback", ""},
		{"loop.test", "loop.test resolves to 127.0.0.1, which is a loopback address", ""},
		{"localhost", "loopback host name", ""},
		{"meta.test", "meta.test resolves to 169.254.169.254, which is a cloud metadata address", "cloud metadata"},
		{"mapped.test", "169.254.169.254, which is a cloud metadata address", "cloud metadata"},
		{"mixed.test", "loopback", "cloud metadata"},
		{"private.test", "10.0.0.7, which is a private address", "dial"},
		{"linklocal.test", "link-local", "link-local"},
		{"169.254.169.254", "cloud metadata", "cloud metadata"},
		{"metadata.google.internal", "cloud metadata host name", "cloud metadata host name"},
		{"nx.test", "no such host", "no such host"},
	}
	for _, tt := range tests {
		t.Run(tt.host, func(t *testing.T) {
			for _, c := range []struct {
				name   string
				client *http.Client
				want   string
			}{{"project", project, tt.wantProject}, {"user", user, tt.wantUser}} {
				before := srv.hits.Load()
				body, err := get(t, c.client, at(tt.host))
				if c.want == "" {
					if err != nil || body != "hello from loopback" {
						t.Errorf("%s: GET %s = %q, %v; want the loopback server's answer", c.name, tt.host, body, err)
					}
					continue
				}
				if err == nil || !strings.Contains(err.Error(), c.want) {
					t.Errorf("%s: GET %s: error %v, want one saying %q", c.name, tt.host, err, c.want)
				}
				if srv.hits.Load() != before {
					t.Errorf("%s: a refused request reached the server", c.name)
				}
			}
		})
	}
}

// A private address that the user policy allows is really dialled, and one
// the resolver gives that nobody listens on fails as a dial error, not as a
// refusal — so "dial" in the table above proves the check let it through.
func TestPrivateAllowedIsDialled(t *testing.T) {
	var dialled []string
	d := &net.Dialer{Control: func(_, address string, _ syscall.RawConn) error {
		dialled = append(dialled, address)
		return errors.New("test dialer: not connecting")
	}}
	res := newResolver(map[string][][]string{"private.test": {{"10.0.0.7"}}})
	_, err := get(t, Client(Policy{AllowPrivate: true, Resolver: res, Dialer: d}, nil), "http://private.test:81/")
	if err == nil || errors.Is(err, ErrRefused) {
		t.Fatalf("err = %v, want the test dialer's error", err)
	}
	if len(dialled) != 1 || dialled[0] != "10.0.0.7:81" {
		t.Errorf("dialled %q, want the resolved, checked address 10.0.0.7:81", dialled)
	}
}

// DNS rebinding: the resolver answers a public address first and loopback
// afterwards. The dialer resolves once and dials exactly the address it
// checked, so the loopback server is never reached; and an answer that is
// loopback from the start is refused.
func TestDNSRebinding(t *testing.T) {
	srv := startServer(t, nil)
	res := newResolver(map[string][][]string{
		"rebind.test": {{"93.184.216.34"}, {"127.0.0.1"}},
	})
	var dialled []string
	d := &net.Dialer{Control: func(_, address string, _ syscall.RawConn) error {
		dialled = append(dialled, address)
		return errors.New("test dialer: the public address is not dialled for real")
	}}
	c := Client(Policy{Resolver: res, Dialer: d}, nil)
	url := "http://rebind.test:" + srv.port + "/"
	if _, err := get(t, c, url); err == nil || errors.Is(err, ErrRefused) {
		t.Fatalf("first GET: %v, want the test dialer's error", err)
	}
	if len(dialled) != 1 || dialled[0] != "93.184.216.34:"+srv.port {
		t.Errorf("dialled %q, want only the checked public address", dialled)
	}
	if n := res.count("rebind.test"); n != 1 {
		t.Errorf("the name was resolved %d times for one dial, want 1 (a second lookup is what rebinding exploits)", n)
	}
	// The next connection resolves again and now gets loopback: refused.
	_, err := get(t, c, url)
	if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "rebind.test resolves to 127.0.0.1") {
		t.Errorf("second GET: %v, want the loopback answer refused", err)
	}
	if srv.hits.Load() != 0 {
		t.Errorf("the loopback server got %d requests", srv.hits.Load())
	}
}

func TestRedirectsAreRechecked(t *testing.T) {
	res := newResolver(map[string][][]string{"meta.test": {{"169.254.169.254"}}})
	final := startServer(t, nil)
	var target string
	redirector := startServer(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target, http.StatusFound)
	})
	user := Client(Policy{AllowPrivate: true, Resolver: res}, nil)
	tests := []struct{ target, want string }{
		{"http://169.254.169.254/latest/meta-data/", "redirect to http://169.254.169.254/latest/meta-data/: refused: 169.254.169.254 is a cloud metadata address"},
		{"http://[::ffff:169.254.169.254]/", "cloud metadata"},
		{"http://0xa9fea9fe/", "cloud metadata"},
		{"http://metadata.google.internal/", "cloud metadata host name"},
		{"http://meta.test:" + final.port + "/", "meta.test resolves to 169.254.169.254"},
		{"ftp://example.com/", "ftp:// URLs are not allowed"},
		{"file:///etc/passwd", "file:// URLs are not allowed"},
	}
	for _, tt := range tests {
		target = tt.target
		_, err := get(t, user, redirector.URL)
		if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("redirect to %s: %v, want a refusal saying %q", tt.target, err, tt.want)
		}
	}
	// An allowed redirect is followed.
	target = final.URL + "/ok"
	if body, err := get(t, user, redirector.URL); err != nil || body != "hello from loopback" {
		t.Errorf("allowed redirect: %q, %v", body, err)
	}
	if final.hits.Load() != 1 {
		t.Errorf("final server hits = %d, want 1 (only the allowed redirect)", final.hits.Load())
	}
}

// A redirect from a server the project policy may reach to loopback is
// refused at dial time (the project policy cannot reach the test server
// itself, so the first hop goes through a name the resolver maps to a
// public address that a test dialer sends to the loopback server).
func TestProjectRedirectToLoopbackRefused(t *testing.T) {
	final := startServer(t, nil)
	redirector := startServer(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://loop.test:"+final.port+"/", http.StatusTemporaryRedirect)
	})
	res := newResolver(map[string][][]string{
		"public.test": {{"93.184.216.34"}},
		"loop.test":   {{"127.0.0.1"}},
	})
	// The dialer is real; it only rewrites the (checked) public address to
	// the redirector, the stand-in for a public server.
	d := &net.Dialer{}
	p := Policy{Resolver: res}
	base := http.DefaultTransport.(*http.Transport).Clone()
	c := Client(p, base)
	c.Transport.(*checkTransport).base.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		if host, _, _ := net.SplitHostPort(addr); host == "public.test" {
			// Check as the guarded dialer does, then connect to the stand-in.
			if _, err := p.DialContext(canceled(ctx), network, addr); err != nil && errors.Is(err, ErrRefused) {
				return nil, err
			}
			_, rport, _ := net.SplitHostPort(redirector.Listener.Addr().String())
			return d.DialContext(ctx, network, net.JoinHostPort("127.0.0.1", rport))
		}
		return p.DialContext(ctx, network, addr)
	}
	_, err := get(t, c, "http://public.test/")
	if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "loop.test resolves to 127.0.0.1, which is a loopback address") {
		t.Errorf("err = %v, want the redirect to loopback refused", err)
	}
	if redirector.hits.Load() != 1 || final.hits.Load() != 0 {
		t.Errorf("hits: redirector %d (want 1), loopback target %d (want 0)", redirector.hits.Load(), final.hits.Load())
	}
}

// canceled returns a context that is already done, so that a check-only
// DialContext returns before it connects anywhere.
func canceled(ctx context.Context) context.Context {
	c, cancel := context.WithCancel(ctx)
	cancel()
	return c
}

func TestClassify(t *testing.T) {
	tests := []struct {
		ip   string
		want Class
	}{
		{"8.8.8.8", Public},
		{"2606:4700::1111", Public},
		{"64:ff9b::808:808", Public},
		{"169.254.169.254", Metadata},
		{"::ffff:169.254.169.254", Metadata},
		{"64:ff9b::169.254.169.254", Metadata},
		{"::ffff:0:169.254.169.254", Metadata},
		{"2002:a9fe:a9fe::", Metadata},
		{"2001:0:4136:e378:8000:63bf:5601:5601", Metadata}, // Teredo, client ^0x5601.. = 169.254.169.254... (inverted a9fe)
		{"fd00:ec2::254", Metadata},
		{"169.254.0.1", LinkLocal},
		{"fe80::abcd", LinkLocal},
		{"64:ff9b::a9fe:101", LinkLocal},
		{"127.0.0.53", Private},
		{"::1", Private},
		{"::ffff:10.0.0.1", Private},
		{"64:ff9b::7f00:1", Private},
		{"100.127.255.255", Private},
		{"100.128.0.0", Public},
	}
	for _, tt := range tests {
		ip := netip.MustParseAddr(tt.ip)
		if got, why := Classify(ip); got != tt.want {
			t.Errorf("Classify(%s) = %v (%s), want %v", tt.ip, got, why, tt.want)
		}
	}
}

// A server's answer headers are held to MaxHeaderBytes: net/http's default
// (10 MB) let a remote have the host hold megabytes of one header (a
// session ID, a DPoP nonce) and echo it back on every request.
func TestAnswerHeadersAreBounded(t *testing.T) {
	huge := strings.Repeat("a", 2<<20)
	srv := startServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Mcp-Session-Id", huge)
		w.Write([]byte("hello"))
	})
	_, err := get(t, Client(Policy{AllowPrivate: true}, nil), srv.URL)
	if err == nil || !strings.Contains(err.Error(), "headers exceeded") {
		t.Errorf("an answer with 2 MiB of headers: %v, want it refused", err)
	}
	ok := startServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Mcp-Session-Id", huge[:MaxHeaderBytes/2])
		w.Write([]byte("hello"))
	})
	if body, err := get(t, Client(Policy{AllowPrivate: true}, nil), ok.URL); err != nil || body != "hello" {
		t.Errorf("an answer with %d bytes of headers: %q %v", MaxHeaderBytes/2, body, err)
	}
}
