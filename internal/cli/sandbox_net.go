package cli

import (
	"net"
	"net/url"
	"slices"
	"strings"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/internal/lazyre"
)

// networkRefusal marks a stderr line that says a connection or a name
// lookup failed the way a sandbox without that destination makes it
// fail: no route, nothing listening at the address inside, no DNS, or
// the sandbox proxy's 403.
var networkRefusal = []string{
	"eai_again", "enotfound", "getaddrinfo", "temporary failure in name resolution",
	"econnrefused", "connection refused", "enetunreach", "network is unreachable",
	"not in this server's network allow-list",
}

var (
	urlInLine      = lazyre.New(`https?://[^\s'"<>()\[\],]+`)
	hostPortInLine = lazyre.New(`(?i)(?:^|[\s'"(])((?:[a-z0-9_-]+\.)*[a-z0-9_-]+|\[[0-9a-f:.]+\]):([0-9]{1,5})\b`)
)

// refusedDestination finds, in a sandboxed server's stderr, a
// destination it failed to reach that its sandbox does not list — the
// URL of a failed request (npm's "request to https://registry.npmjs.org/…
// failed, reason: getaddrinfo EAI_AGAIN"), else a "host:port" named next
// to the error — as "host:port". Not for a sandbox with the full network.
func refusedDestination(stderr []string, p *config.SandboxPolicy) (string, bool) {
	if p == nil || p.NetworkAll {
		return "", false
	}
	for i := len(stderr) - 1; i >= 0; i-- {
		l := stderr[i]
		low := strings.ToLower(l)
		if !slices.ContainsFunc(networkRefusal, func(s string) bool { return strings.Contains(low, s) }) {
			continue
		}
		var found []string
		for _, raw := range urlInLine().FindAllString(l, 4) {
			u, err := url.Parse(raw)
			if err != nil || u.Hostname() == "" {
				continue
			}
			port := u.Port()
			if port == "" {
				port = map[string]string{"http": "80", "https": "443"}[strings.ToLower(u.Scheme)]
			}
			found = append(found, net.JoinHostPort(strings.ToLower(u.Hostname()), port))
		}
		if len(found) == 0 {
			for _, m := range hostPortInLine().FindAllStringSubmatch(l, 4) {
				found = append(found, strings.ToLower(m[1])+":"+m[2])
			}
		}
		for _, d := range found {
			if !slices.Contains(p.Allow, d) {
				return d, true
			}
		}
	}
	return "", false
}
