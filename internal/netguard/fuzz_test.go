package netguard

import (
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strings"
	"testing"
)

// FuzzCheckURL: CheckURL never panics, and a URL whose host is a metadata
// or link-local address — as judged by an independent parse of the host
// (net.ParseIP, and this package's legacy-IPv4 parser) — is refused by
// both policies. The checked-in corpus holds the spellings of the issue.
func FuzzCheckURL(f *testing.F) {
	for _, s := range []string{
		"http://169.254.169.254/", "http://[::ffff:169.254.169.254]/", "http://2852039166/",
		"http://0251.0376.0251.0376/", "http://0xa9fea9fe/", "ftp://example.com/", "file:///etc/passwd",
		"https://api.example.com/mcp", "http://127.0.0.1:8080/mcp", "http://metadata.google.internal/",
		"http://[fe80::1%25eth0]/", "http://169.254.43518/",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		errUser := CheckURL(raw)
		errProject := Policy{}.CheckURL(raw)
		if errUser != nil && errProject == nil {
			t.Fatalf("%q: the stricter policy allowed what the lenient one refused (%v)", raw, errUser)
		}
		u, err := url.Parse(raw)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
			if errUser == nil && err != nil {
				t.Fatalf("%q: unparseable URL accepted", raw)
			}
			return
		}
		host := u.Hostname()
		var ip netip.Addr
		if std := net.ParseIP(strings.Replace(host, "%25", "%", 1)); std != nil {
			ip, _ = netip.AddrFromSlice(std)
		} else if a, ok := ParseHost(host); ok {
			ip = a
		} else {
			return
		}
		if c, _ := Classify(ip); c == Metadata || c == LinkLocal {
			if errUser == nil || errProject == nil {
				t.Fatalf("%q: host %s is %v but was allowed", raw, ip, c)
			}
		}
	})
}

// FuzzMetadataSpellings writes a link-local IPv4 address in a random
// spelling (dotted, 1-3 parts, each decimal, octal or hex, optionally
// IPv4-mapped IPv6) the way an attacker would, and checks it is refused
// by CheckURL and by the dialer.
func FuzzMetadataSpellings(f *testing.F) {
	f.Add(byte(169), byte(254), uint8(0), uint8(0))
	f.Add(byte(169), byte(254), uint8(1), uint8(7))
	f.Add(byte(169), byte(254), uint8(2), uint8(0x55))
	f.Add(byte(169), byte(254), uint8(3), uint8(0xff))
	f.Fuzz(func(t *testing.T, c, d byte, parts, radix uint8) {
		ip := [4]byte{169, 254, c, d}
		host := spell(ip, parts%5, radix)
		raw := "http://" + host + "/"
		if err := CheckURL(raw); err == nil {
			t.Fatalf("%s (%v) allowed", raw, netip.AddrFrom4(ip))
		}
		h := host
		if strings.HasPrefix(h, "[") {
			h = h[1 : len(h)-1]
		}
		if _, err := (Policy{AllowPrivate: true}).DialContext(t.Context(), "tcp", net.JoinHostPort(h, "80")); err == nil {
			t.Fatalf("dialer connected to %s", host)
		} else if !strings.HasPrefix(err.Error(), "refused: ") {
			t.Fatalf("dialer on %s: %v, want a refusal", host, err)
		}
	})
}

// spell renders ip with the given number of parts (0: IPv4-mapped IPv6,
// 1-4: that many dotted parts) and per-part radixes from the bits of radix.
func spell(ip [4]byte, parts, radix uint8) string {
	v := uint32(ip[0])<<24 | uint32(ip[1])<<16 | uint32(ip[2])<<8 | uint32(ip[3])
	if parts == 0 {
		if radix&1 == 0 {
			return fmt.Sprintf("[::ffff:%d.%d.%d.%d]", ip[0], ip[1], ip[2], ip[3])
		}
		return fmt.Sprintf("[::ffff:%x:%x]", v>>16, v&0xffff)
	}
	var nums []uint32
	for i := 0; i < int(parts)-1; i++ {
		nums = append(nums, uint32(ip[i]))
	}
	rest := v & (1<<(8*(5-int(parts))) - 1)
	if parts == 1 {
		rest = v
	}
	nums = append(nums, rest)
	var out []string
	for i, n := range nums {
		switch (radix >> (2 * i)) & 3 {
		case 1:
			out = append(out, fmt.Sprintf("0%o", n))
		case 2:
			out = append(out, fmt.Sprintf("0x%x", n))
		case 3:
			out = append(out, fmt.Sprintf("0X%08X", n))
		default:
			out = append(out, fmt.Sprint(n))
		}
	}
	return strings.Join(out, ".")
}
