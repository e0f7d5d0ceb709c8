package proc

import (
	"net/url"
	"strconv"
	"testing"
	"unicode/utf8"

	"golang.org/x/net/http/httpproxy"
)

// httpproxyVia is what via decided while it called golang.org/x/net's
// httpproxy (net/http's ProxyFromEnvironment), the reference via must
// agree with.
func httpproxyVia(c *ProxyConfig, t target, tls bool) *url.URL {
	if c == nil || t.loopback() {
		return nil
	}
	scheme := "http"
	if tls {
		scheme = "https"
	}
	u, err := (&httpproxy.Config{HTTPProxy: c.HTTPProxy, HTTPSProxy: c.HTTPSProxy, NoProxy: c.NoProxy}).
		ProxyFunc()(&url.URL{Scheme: scheme, Host: t.String()})
	if err != nil || u == nil || u.Scheme != "http" {
		return nil
	}
	return u
}

func urlString(u *url.URL) string {
	if u == nil {
		return "direct"
	}
	return u.String()
}

// TestProxyViaAgrees: for the destinations a relay has and the proxy
// settings users write, via chooses the proxy (or a direct connection)
// that httpproxy chooses, and the one this table says.
func TestProxyViaAgrees(t *testing.T) {
	const proxy = "http://proxy.corp:3128"
	for _, tt := range []struct {
		http, https, no string
		dest            string
		tls             bool
		want            string
	}{
		{proxy, proxy, "", "registry.npmjs.org:443", true, proxy},
		{proxy, proxy, "", "registry.npmjs.org:80", false, proxy},
		{"", proxy, "", "example.com:80", false, "direct"},
		{proxy, "", "", "example.com:443", true, "direct"},
		{"proxy.corp:3128", "proxy.corp:3128", "", "example.com:443", true, proxy}, // a bare host:port is http://
		{proxy, "https://proxy.corp:3128", "", "example.com:443", true, "direct"},  // only http:// proxies are used
		{proxy, "socks5://proxy.corp:1080", "", "example.com:443", true, "direct"},
		{proxy, "http://user:pw@proxy.corp:3128", "", "example.com:443", true, "http://user:pw@proxy.corp:3128"},
		{proxy, "%zz", "", "example.com:443", true, "direct"},
		{proxy, proxy, "127.0.0.1", "localhost:8080", true, "direct"},
		{proxy, proxy, "", "127.0.0.1:8080", true, "direct"},
		{proxy, proxy, "", "[::1]:8080", true, "direct"},
		// NO_PROXY names.
		{proxy, proxy, ".corp.example", "git.corp.example:443", true, "direct"},
		{proxy, proxy, ".corp.example", "corp.example:443", true, proxy},
		{proxy, proxy, "corp.example", "corp.example:443", true, "direct"},
		{proxy, proxy, "corp.example", "git.corp.example:443", true, "direct"},
		{proxy, proxy, "corp.example", "notcorp.example:443", true, proxy},
		{proxy, proxy, "*.corp.example", "git.corp.example:443", true, "direct"},
		{proxy, proxy, "*.corp.example", "corp.example:443", true, proxy},
		{proxy, proxy, "*corp.example", "corp.example:443", true, proxy},
		{proxy, proxy, " Example.COM ,other.org", "example.com:443", true, "direct"},
		{proxy, proxy, "example.com:443", "example.com:443", true, "direct"},
		{proxy, proxy, "example.com:8443", "example.com:443", true, proxy},
		{proxy, proxy, "*", "example.com:443", true, "direct"},
		{proxy, proxy, "other.org,*", "10.0.0.1:443", true, "direct"},
		{proxy, proxy, ":443", "example.com:443", true, proxy},
		// NO_PROXY addresses and prefixes.
		{proxy, proxy, "10.0.0.0/8", "10.1.2.3:443", true, "direct"},
		{proxy, proxy, "10.0.0.0/8", "11.1.2.3:443", true, proxy},
		{proxy, proxy, "10.1.2.3", "10.1.2.3:443", true, "direct"},
		{proxy, proxy, "10.1.2.3:8443", "10.1.2.3:443", true, proxy},
		{proxy, proxy, "::ffff:10.1.2.3", "10.1.2.3:443", true, "direct"},
		{proxy, proxy, "[2001:db8::1]:443", "[2001:db8::1]:443", true, "direct"},
		{proxy, proxy, "2001:db8::/32", "[2001:db8::1]:443", true, "direct"},
		{proxy, proxy, "10.1.2.3", "host10.example:443", true, proxy},
		{proxy, proxy, "example.com", "93.184.216.34:443", true, proxy},
	} {
		dest, err := parseTarget(tt.dest, 0)
		if err != nil {
			t.Fatal(err)
		}
		c := &ProxyConfig{HTTPProxy: tt.http, HTTPSProxy: tt.https, NoProxy: tt.no}
		got, ref := urlString(c.via(dest, tt.tls)), urlString(httpproxyVia(c, dest, tt.tls))
		if got != tt.want || ref != tt.want {
			t.Errorf("%+v: via %s, httpproxy %s, want %s", tt, got, ref, tt.want)
		}
	}
	if got := (*ProxyConfig)(nil).via(target{host: "example.com", port: 443}, true); got != nil {
		t.Errorf("no proxy configured: via %v", got)
	}
}

// FuzzProxyVia: via and httpproxy choose the same proxy for every
// destination parseTarget gives and every setting whose NO_PROXY is ASCII
// (an entry in Unicode is the one documented difference).
func FuzzProxyVia(f *testing.F) {
	f.Add("http://proxy.corp:3128", "proxy.corp:3128", ".corp.example,10.0.0.0/8", "git.corp.example", uint16(443), true)
	f.Add("", "http://p:1", "*.a.b:80,[::1]:80, 10.1.2.3 ", "10.1.2.3", uint16(80), false)
	f.Add("p:1", "p:1", "a.b,:80,[]:1,*.", "x.a.b", uint16(8080), true)
	f.Fuzz(func(t *testing.T, httpProxy, httpsProxy, noProxy, host string, port uint16, tls bool) {
		if !isASCII(noProxy) || !utf8.ValidString(host) {
			t.Skip()
		}
		dest, err := parseTarget(host+":"+strconv.Itoa(int(port)), 0)
		if err != nil {
			t.Skip()
		}
		c := &ProxyConfig{HTTPProxy: httpProxy, HTTPSProxy: httpsProxy, NoProxy: noProxy}
		if got, ref := urlString(c.via(dest, tls)), urlString(httpproxyVia(c, dest, tls)); got != ref {
			t.Errorf("%+v to %s (tls %v): via %s, httpproxy %s", c, dest, tls, got, ref)
		}
	})
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}
