package proc

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
)

func TestNetProxyParseTarget(t *testing.T) {
	for _, tt := range []struct {
		in   string
		def  uint16
		want string // "" for an error
	}{
		{"example.com:443", 0, "example.com:443"},
		{"Registry.NPMJS.org.:443", 0, "registry.npmjs.org:443"},
		{"127.0.0.1:8080", 0, "127.0.0.1:8080"},
		{"2130706433:8080", 0, "127.0.0.1:8080"}, // one address, one spelling
		{"0x7f.1:80", 0, "127.0.0.1:80"},
		{"[::1]:8080", 0, "[::1]:8080"},
		{"[::ffff:127.0.0.1]:22", 0, "127.0.0.1:22"},
		{"[0:0::1]:1", 0, "[::1]:1"},
		{"example.com", 80, "example.com:80"},
		{"[::1]", 80, "[::1]:80"},
		{"example.com", 0, ""},
		{"example.com:", 80, ""},
		{"example.com:0", 0, ""},
		{"example.com:65536", 0, ""},
		{"example.com:+80", 0, ""},
		{"example.com:0080", 0, "example.com:80"},
		{"::1:80", 0, ""},
		{"[fe80::1%eth0]:80", 0, ""},
		{"[127.0.0.1]:80", 0, ""},
		{"[::1]x:80", 0, ""},
		{"exa mple.com:80", 0, ""},
		{"a..b:80", 0, ""},
		{"user@host:80", 0, ""},
		{":80", 0, ""},
		{"host:80/path", 0, ""},
	} {
		got, err := parseTarget(tt.in, tt.def)
		switch {
		case tt.want == "" && err == nil:
			t.Errorf("parseTarget(%q) = %s, want an error", tt.in, got)
		case tt.want != "" && err != nil:
			t.Errorf("parseTarget(%q): %v, want %s", tt.in, err, tt.want)
		case tt.want != "" && got.String() != tt.want:
			t.Errorf("parseTarget(%q) = %s, want %s", tt.in, got, tt.want)
		}
	}
}

// FuzzProxyTarget: parseTarget never panics, and what it accepts it
// gives in a canonical form that reads back as itself.
func FuzzProxyTarget(f *testing.F) {
	for _, s := range []string{"example.com:443", "[::1]:8080", "2130706433:80", "0x7f.1:80", "[::ffff:169.254.169.254]:80", "a.b.:1", "[", "]:", ":"} {
		f.Add(s, uint16(0))
	}
	f.Add("example.com", uint16(80))
	f.Fuzz(func(t *testing.T, s string, def uint16) {
		tg, err := parseTarget(s, def)
		if err != nil {
			return
		}
		if tg.host == "" || tg.port == 0 {
			t.Fatalf("%q: accepted as %#v", s, tg)
		}
		again, err := parseTarget(tg.String(), 0)
		if err != nil || again != tg {
			t.Fatalf("%q: canonical %q reads back as %#v, %v", s, tg.String(), again, err)
		}
	})
}

// FuzzProxyRequest: whatever a sandboxed client sends the proxy, it
// dials only a listed destination.
func FuzzProxyRequest(f *testing.F) {
	for _, s := range []string{
		"CONNECT 127.0.0.1:9 HTTP/1.1\r\nHost: x\r\n\r\n",
		"CONNECT 2130706433:9 HTTP/1.1\r\n\r\n",
		"CONNECT [::1]:9 HTTP/1.1\r\n\r\n",
		"CONNECT evil.example:9 HTTP/1.1\r\nHost: 127.0.0.1:9\r\n\r\n",
		"GET http://127.0.0.1:9/x HTTP/1.1\r\nHost: evil.example\r\n\r\n",
		"GET http://evil.example/ HTTP/1.1\r\nHost: 127.0.0.1:9\r\n\r\n",
		"GET / HTTP/1.1\r\nHost: 127.0.0.1:9\r\n\r\n",
		"GET https://127.0.0.1:9/ HTTP/1.1\r\n\r\n",
		"CONNECT http://127.0.0.1:9 HTTP/1.1\r\n\r\n",
	} {
		f.Add([]byte(s))
	}
	allow, _ := parseAllow([]string{"127.0.0.1:9", "example.com:443"})
	f.Fuzz(func(t *testing.T, in []byte) {
		np := newNetProxy(allow, true)
		var dialed []string
		np.dial = func(_ context.Context, _, addr string) (net.Conn, error) {
			dialed = append(dialed, addr)
			return nil, errors.New("not dialled in the fuzz test")
		}
		c, client := net.Pipe()
		go func() {
			client.Write(in)
			client.Close()
		}()
		np.handle(c)
		for _, a := range dialed {
			if a != "127.0.0.1:9" && a != "example.com:443" {
				t.Fatalf("%q: the proxy dialled %s, which is not listed", in, a)
			}
		}
	})
}

// echoName answers each connection with name, a line to a line and an
// HTTP response to a GET (as namedListener, without a sandbox).
func echoName(t testing.TB, name string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				br := bufio.NewReader(c)
				line, err := br.ReadString('\n')
				if err != nil {
					return
				}
				if !strings.HasPrefix(line, "GET ") {
					fmt.Fprintf(c, "%s %s", name, line)
					return
				}
				for {
					if l, err := br.ReadString('\n'); err != nil || strings.TrimSpace(l) == "" {
						break
					}
				}
				fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s", len(name), name)
			}()
		}
	}()
	return ln.Addr().String()
}

// The proxy over real loopback connections, outside any sandbox: a
// listed destination is tunnelled (bytes sent with the CONNECT head
// included) or fetched (absolute form, one request, Connection: close);
// an unlisted one is 403; what is not a proxy request is 400; metadata
// is refused even when private addresses are allowed; and close ends a
// tunnel that is open.
func TestNetProxyRelay(t *testing.T) {
	listed, other := echoName(t, "listed"), echoName(t, "other")
	allow, err := parseAllow([]string{listed, "169.254.169.254:80"})
	if err != nil {
		t.Fatal(err)
	}
	np := newNetProxy(allow, true)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var served sync.WaitGroup
	served.Add(1)
	go func() { defer served.Done(); np.serve(ln, nil) }()
	t.Cleanup(func() { np.close(); served.Wait() })

	ask := func(req string) (*http.Response, *bufio.Reader, net.Conn) {
		t.Helper()
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		io.WriteString(c, req)
		br := bufio.NewReader(c)
		resp, err := http.ReadResponse(br, &http.Request{Method: strings.Fields(req)[0]})
		if err != nil {
			t.Fatalf("%q: %v", req, err)
		}
		return resp, br, c
	}
	body := func(r *http.Response) string {
		b, _ := io.ReadAll(r.Body)
		return strings.TrimSpace(string(b))
	}

	resp, br, c := ask("CONNECT " + listed + " HTTP/1.1\r\nHost: " + listed + "\r\n\r\nearly\n")
	if resp.StatusCode != 200 {
		t.Fatalf("CONNECT listed: %s %s", resp.Status, body(resp))
	}
	if line, err := br.ReadString('\n'); line != "listed early\n" {
		t.Errorf("through the tunnel: %q, %v; want the bytes sent with the head relayed", line, err)
	}
	c.Close()

	resp, _, _ = ask("GET http://" + listed + "/x HTTP/1.1\r\nHost: " + listed + "\r\nProxy-Authorization: Basic eA==\r\n\r\n")
	if got := body(resp); resp.StatusCode != 200 || got != "listed" || !resp.Close {
		t.Errorf("GET listed: %s %q close=%v, want 200 listed, Connection: close", resp.Status, got, resp.Close)
	}

	for _, tt := range []struct{ req, code, has string }{
		{"CONNECT " + other + " HTTP/1.1\r\n\r\n", "403", "allow-list"},
		{"GET http://" + other + "/ HTTP/1.1\r\nHost: " + listed + "\r\n\r\n", "403", "allow-list"},
		{"CONNECT evil.example:443 HTTP/1.1\r\nHost: " + listed + "\r\n\r\n", "403", "allow-list"},
		{"GET / HTTP/1.1\r\nHost: " + listed + "\r\n\r\n", "400", "CONNECT"},
		{"CONNECT 169.254.169.254:80 HTTP/1.1\r\n\r\n", "403", "metadata"},
		{"hello\r\n\r\n", "400", "not an HTTP proxy request"},
	} {
		resp, _, _ := ask(tt.req)
		if got := body(resp); !strings.HasPrefix(resp.Status, tt.code) || !strings.Contains(got, tt.has) {
			t.Errorf("%q: %s %q, want %s naming %q", tt.req, resp.Status, got, tt.code, tt.has)
		}
	}

	// An open tunnel ends with close (the server and its leftovers are gone).
	resp, br, _ = ask("CONNECT " + listed + " HTTP/1.1\r\n\r\n")
	if resp.StatusCode != 200 {
		t.Fatalf("CONNECT listed: %s", resp.Status)
	}
	np.close()
	if _, err := br.ReadString('\n'); err == nil {
		t.Errorf("the tunnel is still open after close")
	}
}

// BenchmarkProxyConnect is what the forwarder adds to one connection: a
// loopback connection that sends a line and reads the answer, direct
// and through the proxy (CONNECT, the check, the supervisor's dial, the
// relay both ways).
//
//	go test ./internal/proc -run XXX -bench BenchmarkProxyConnect -count 3
func BenchmarkProxyConnect(b *testing.B) {
	dest := echoName(b, "dest")
	allow, _ := parseAllow([]string{dest})
	np := newNetProxy(allow, true)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	go np.serve(ln, nil)
	defer np.close()
	line := func(c net.Conn, br *bufio.Reader) {
		io.WriteString(c, "x\n")
		if s, err := br.ReadString('\n'); err != nil || s != "dest x\n" {
			b.Fatalf("answer %q, %v", s, err)
		}
	}
	b.Run("direct", func(b *testing.B) {
		for b.Loop() {
			c, err := net.Dial("tcp", dest)
			if err != nil {
				b.Fatal(err)
			}
			line(c, bufio.NewReader(c))
			c.Close()
		}
	})
	b.Run("proxy", func(b *testing.B) {
		for b.Loop() {
			c, err := net.Dial("tcp", ln.Addr().String())
			if err != nil {
				b.Fatal(err)
			}
			io.WriteString(c, "CONNECT "+dest+" HTTP/1.1\r\n\r\n")
			br := bufio.NewReader(c)
			resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect})
			if err != nil || resp.StatusCode != 200 {
				b.Fatalf("CONNECT: %v %v", resp, err)
			}
			line(c, br)
			c.Close()
		}
	})
}
