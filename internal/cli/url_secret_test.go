package cli

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/testserver/testhttp"
	"github.com/switchboard-mcp/switchboard/internal/testserver/testoauth"
)

// urlSecret is the value of ${ACME}: a name no secret-name pattern
// matches, in the query, the path and the userinfo of URLs.
const urlSecret = "acme-planted-7f3k9q"

// urlSecretServers are the attack of issue 22 (hole 6): ${ACME} expanded
// into a reachable server's query, and into the path and userinfo of
// unreachable ones, whose dial errors quote the URL net/http sent.
func urlSecretServers(web *testhttp.Server) map[string]any {
	return map[string]any{
		"webq": map[string]any{"type": "http", "url": web.URL + "?k=${ACME}"},
		"webp": map[string]any{"type": "http", "url": "http://127.0.0.1:1/${ACME}/mcp"},
		"webu": map[string]any{"type": "http", "url": "http://bob:${ACME}@127.0.0.1:1/mcp"},
		"webh": map[string]any{"type": "sse", "url": "http://127.0.0.1:1/t/${ACME:-none}?v=2"},
	}
}

// TestURLSecretNotShown (issue 22, hole 6): a ${VAR} whose name says
// nothing, expanded into a URL, appears in none of status, doctor, mcp get,
// mcp list (each plain and --json) nor the log files, at --log-level
// debug; the URL is shown as written.
func TestURLSecretNotShown(t *testing.T) {
	w := newRTWorld(t)
	web := testhttp.Start(t, "echo", testhttp.Options{})
	w.userServers(urlSecretServers(web))
	env := map[string]string{"ACME": urlSecret}

	var all strings.Builder
	for _, args := range [][]string{
		{"status"}, {"status", "--json"}, {"doctor"}, {"doctor", "--json"},
		{"mcp", "get", "webq"}, {"mcp", "get", "webp", "--json"}, {"mcp", "get", "webu"},
		{"mcp", "list"}, {"mcp", "list", "--json"}, {"tools", "--json"},
	} {
		args = append(args, "--log-level", "debug")
		out, errOut, _ := w.runEnv(env, args...)
		fmt.Fprintf(&all, "$ %s\n%s%s", strings.Join(args, " "), out, errOut)
	}
	text := all.String()
	// The check proves something only if the URLs and their errors showed.
	for _, want := range []string{
		"?k=${ACME}", "/${ACME}/mcp", "connection refused", "connected", "msg=connecting",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("%q is nowhere in the output; the check below proves little", want)
		}
	}
	if strings.Contains(text, urlSecret) {
		t.Errorf("the output holds the value of ${ACME}:\n%s", text)
	}
	checkLogs(t, filepath.Join(w.sb, "logs"), urlSecret)
}

// checkLogs fails if no log file is under dir, or one holds secret.
func checkLogs(t *testing.T, dir, secret string) {
	t.Helper()
	n := 0
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		n++
		b, err := os.ReadFile(path)
		if strings.Contains(string(b), secret) {
			t.Errorf("log %s holds %q:\n%s", path, secret, b)
		}
		return err
	})
	if err != nil || n == 0 {
		t.Errorf("no log files under %s (%v)", dir, err)
	}
}

// TestGatewayURLSecretNotLogged: the gateway's warnings and its log lines
// (stderr and <state>/logs) keep ${ACME}'s value out too.
func TestGatewayURLSecretNotLogged(t *testing.T) {
	w := newGatewayWorld(t)
	web := testhttp.Start(t, "echo", testhttp.Options{})
	writeJSON(t, filepath.Join(w.sbHome, "mcp.json"), map[string]any{"mcpServers": urlSecretServers(web)})
	w.permissions(t, []string{"mcp__webq"}, nil)
	w.env = append(w.env, "ACME="+urlSecret)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	client := mcp.NewClient(&mcp.Implementation{Name: "gateway-test", Version: "1"}, nil)
	cmd := w.command(t, "--log-level", "debug", "serve", "--stdio")
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	if txt, isErr := callText(t, ctx, cs, "webq__echo", map[string]any{"text": "through the gateway"}); isErr || !strings.Contains(txt, "through the gateway") {
		t.Errorf("call: isError %v, %q", isErr, txt)
	}
	// Ask for what fails: a call to a server in error, whose answer quotes it.
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "webp__echo", Arguments: map[string]any{}})
	var answer string
	if err != nil {
		answer = err.Error()
	} else {
		for _, c := range res.Content {
			if tc, ok := c.(*mcp.TextContent); ok {
				answer += tc.Text
			}
		}
	}
	cs.Close()
	text := stderr.String() + answer
	for _, want := range []string{"connection refused", "?k=${ACME}"} {
		if !strings.Contains(text, want) {
			t.Errorf("%q is nowhere in the gateway's stderr; the check below proves little:\n%s", want, text)
		}
	}
	if strings.Contains(text, urlSecret) {
		t.Errorf("the gateway's stderr or answers hold the value of ${ACME}:\n%s", text)
	}
	checkLogs(t, filepath.Join(w.sbHome, "logs"), urlSecret)
}

// TestGatewayHTTPRepeatedHeaders (issue 22): a request is judged on every
// copy of a header, sent over a real loopback socket to `serve --http`: a
// foreign Origin after an allowed (or empty) one is refused with 403, and
// a second Authorization, Mcp-Session-Id or Host is refused with 400
// rather than read from its first copy.
func TestGatewayHTTPRepeatedHeaders(t *testing.T) {
	w := newGatewayWorld(t)
	w.servers(t, "alpha")
	tokenFile := filepath.Join(w.dir, "token")
	if err := os.WriteFile(tokenFile, []byte("s3cret-gateway-token\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	base, stop := startHTTPGateway(t, w, "--http", "127.0.0.1:0", "--token-file", tokenFile)
	defer stop()
	addr := strings.TrimPrefix(base, "http://")
	own := "Origin: http://localhost:" + portOf(base)
	auth := "Authorization: Bearer s3cret-gateway-token"
	host := "Host: " + addr
	for _, tc := range []struct {
		name    string
		headers []string
		want    int
	}{
		{"one own origin", []string{host, auth, own}, 200},
		{"own origin, then a foreign one", []string{host, auth, own, "Origin: http://evil.example"}, 403},
		{"empty origin, then a foreign one", []string{host, auth, "Origin: ", "Origin: http://evil.example"}, 403},
		{"foreign origin, then own", []string{host, auth, "Origin: http://evil.example", own}, 403},
		{"right token, then a wrong one", []string{host, auth, "Authorization: Bearer nope"}, 400},
		{"wrong token, then the right one", []string{host, "Authorization: Bearer nope", auth}, 400},
		{"two session ids", []string{host, auth, "Mcp-Session-Id: a", "Mcp-Session-Id: b"}, 400},
		{"two hosts", []string{host, "Host: evil.example", auth}, 400},
	} {
		if got := rawInitialize(t, addr, tc.headers); got != tc.want {
			t.Errorf("%s: status %d, want %d", tc.name, got, tc.want)
		}
	}
}

// rawInitialize writes an initialize POST with exactly these header lines
// (net/http's client would merge or refuse repeated ones) and returns the
// status code.
func rawInitialize(t *testing.T, addr string, headers []string) int {
	t.Helper()
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`
	conn, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(30 * time.Second))
	var b strings.Builder
	b.WriteString("POST /mcp HTTP/1.1\r\n")
	for _, h := range headers {
		b.WriteString(h + "\r\n")
	}
	fmt.Fprintf(&b, "Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s", len(body), body)
	if _, err := io.WriteString(conn, b.String()); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("reading the answer: %v", err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// TestURLSecretQuotedNotShown: a URL key whose value net/http's %q quoting
// of the request URL escapes (a `"` in it), so that scrubbing the known
// value cannot find it in `Post "URL": …`, is in none of status, mcp list
// (plain and --json) nor the logs, for a server that refuses the
// connection and for an OAuth server with no token (real loopback
// servers): the reasons say why without the URL.
func TestURLSecretQuotedNotShown(t *testing.T) {
	const value, tail = `acme"quoted-4k2m8x`, "quoted-4k2m8x"
	w := newRTWorld(t)
	srv := testoauth.Start(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refusing := "http://" + ln.Addr().String() + "/mcp"
	ln.Close()
	w.userServers(map[string]any{
		"gone":   map[string]any{"type": "http", "url": refusing + "?k=${ACME2}"},
		"locked": map[string]any{"type": "http", "url": srv.URL + "?k=${ACME2}"},
	})
	env := map[string]string{"ACME2": value}
	var all strings.Builder
	for _, args := range [][]string{
		{"status"}, {"status", "--json"}, {"mcp", "list"}, {"mcp", "list", "--json"},
	} {
		args = append(args, "--log-level", "debug")
		out, errOut, _ := w.runEnv(env, args...)
		fmt.Fprintf(&all, "$ %s\n%s%s", strings.Join(args, " "), out, errOut)
	}
	text := all.String()
	for _, want := range []string{"connection refused", "switchboard mcp login locked", "?k=${ACME2}"} {
		if !strings.Contains(text, want) {
			t.Errorf("%q is nowhere in the output; the check below proves little:\n%s", want, text)
		}
	}
	if strings.Contains(text, tail) {
		t.Errorf("the output holds the value of ${ACME2}:\n%s", text)
	}
	checkLogs(t, filepath.Join(w.sb, "logs"), tail)
}
