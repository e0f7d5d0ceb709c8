package cli

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/internal/proc"
)

// doctor names the destination a sandboxed server failed to reach when
// its stderr says which, and its sandbox does not list it.
func TestRefusedDestination(t *testing.T) {
	none := &config.SandboxPolicy{Write: []string{"/ws"}}
	listed := &config.SandboxPolicy{Allow: []string{"127.0.0.1:5432", "[::1]:8080"}}
	for _, tt := range []struct {
		name   string
		p      *config.SandboxPolicy
		stderr []string
		want   string
	}{
		{"npm", none, []string{"npm error code EAI_AGAIN",
			"npm error request to https://registry.npmjs.org/@modelcontextprotocol%2fserver-everything failed, reason: getaddrinfo EAI_AGAIN registry.npmjs.org",
			"npm error A complete log of this run can be found in: /ws/.npm/_logs/x.log"}, "registry.npmjs.org:443"},
		{"node", none, []string{"Error: connect ECONNREFUSED 127.0.0.1:5432", "    at TCPConnectWrap.afterConnect"}, "127.0.0.1:5432"},
		{"go", none, []string{"dial tcp 10.0.0.5:443: connect: network is unreachable"}, "10.0.0.5:443"},
		{"proxy", none, []string{`fetch failed: 403 Forbidden: switchboard sandbox: api.example.com:443 is not in this server's network allow-list`}, "api.example.com:443"},
		{"http url with port", none, []string{"request to http://Localhost:3000/x failed: ECONNREFUSED"}, "localhost:3000"},
		{"listed, failing for another reason", listed, []string{"Error: connect ECONNREFUSED 127.0.0.1:5432"}, ""},
		{"listed v6", listed, []string{"dial tcp [::1]:8080: connect: connection refused"}, ""},
		{"unlisted v6", none, []string{"dial tcp [::1]:8080: connect: connection refused"}, "[::1]:8080"},
		{"no address", none, []string{"ConnectionRefusedError: [Errno 111] Connection refused"}, ""},
		{"not a refusal", none, []string{"listening on http://127.0.0.1:8080/"}, ""},
		{"full network", &config.SandboxPolicy{NetworkAll: true}, []string{"Error: connect ECONNREFUSED 127.0.0.1:5432"}, ""},
	} {
		got, ok := refusedDestination(tt.stderr, tt.p)
		if got != tt.want || ok != (tt.want != "") {
			t.Errorf("%s: %q, %v; want %q", tt.name, got, ok, tt.want)
		}
	}
}

// FuzzRefusedDestination: any stderr line; what is named is a
// "host:port" the sandbox does not list.
func FuzzRefusedDestination(f *testing.F) {
	for _, s := range []string{
		"npm error request to https://registry.npmjs.org/x failed, reason: getaddrinfo EAI_AGAIN registry.npmjs.org",
		"Error: connect ECONNREFUSED 127.0.0.1:5432", "dial tcp [::1]:8080: connect: connection refused",
		"ECONNREFUSED http://[::1", "ECONNREFUSED https://:443", "econnrefused a:99999",
	} {
		f.Add(s)
	}
	p := &config.SandboxPolicy{Allow: []string{"127.0.0.1:5432"}}
	f.Fuzz(func(t *testing.T, line string) {
		d, ok := refusedDestination([]string{line}, p)
		if !ok {
			return
		}
		if _, _, err := net.SplitHostPort(d); err != nil || slices.Contains(p.Allow, d) {
			t.Fatalf("%q: named %q (%v)", line, d, err)
		}
	})
}

// End to end: a sandboxed Node program that connects to a loopback
// listener of the host (open, so the connection works unconfined) is
// refused at once inside (ECONNREFUSED, printed by Node itself) and
// exits; doctor names that destination and how to allow it.
func TestDoctorNamesRefusedDestination(t *testing.T) {
	if why := proc.SandboxSupport(); why != "" {
		if os.Getenv("CI") == "true" {
			t.Fatalf("no sandbox on this CI machine: %s", why)
		}
		t.Skip(why)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	addr := ln.Addr().(*net.TCPAddr)
	script := fmt.Sprintf(`require("net").connect(%d, "127.0.0.1").on("connect", () => { console.error("connected"); process.exit(3) }).on("error", e => { console.error("Error: " + e.message); process.exit(1) })`, addr.Port)
	w := newRTWorld(t)
	w.userServers(map[string]any{"db": map[string]any{"command": node, "args": []string{"-e", script}, "sandbox": true}})
	out, errOut, _ := w.run(false, "doctor", "--json")
	var checks []doctorCheck
	if err := json.Unmarshal([]byte(out), &checks); err != nil {
		t.Fatalf("doctor --json: %v\n%s\n%s", err, out, errOut)
	}
	want := addr.String()
	for _, c := range checks {
		if c.Check == "sandbox" {
			t.Logf("%+v", c)
			if c.Level != doctorFail || !strings.Contains(c.Message, "could not reach "+want) || !strings.Contains(c.Fix, `"`+want+`"`) {
				t.Errorf("sandbox check %+v, want a failure naming %s and how to list it", c, want)
			}
			return
		}
	}
	t.Fatalf("no sandbox check:\n%s", out)
}
