package cli

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// TestServeAnswersAPipedScript: a script that pipes its requests into
// `serve --stdio` and closes the pipe gets every answer (the SDK would
// cancel the calls in flight at the input's end, and write nothing), and
// serve then exits.
func TestServeAnswersAPipedScript(t *testing.T) {
	w := newGatewayWorld(t)
	w.servers(t, "a")
	w.permissions(t, []string{"mcp__a"}, nil)
	p := startStdio(t, w)
	// One write, then the end: what `printf … | switchboard serve --stdio` does.
	p.send(strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"script","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"a__echo","arguments":{"text":"piped"}}}`,
	}, "\n"))
	p.stdin.Close()
	answer := func(id float64) string {
		m := p.await(id, "", 30*time.Second)
		if m == nil {
			return ""
		}
		b, _ := json.Marshal(m)
		return string(b)
	}
	if got := answer(1); !strings.Contains(got, `"serverInfo"`) {
		t.Errorf("initialize's answer = %q", got)
	}
	if got := answer(2); !strings.Contains(got, `"a__echo"`) {
		t.Errorf("tools/list's answer = %q, want a__echo in it", got)
	}
	if got := answer(3); !strings.Contains(got, "piped") || strings.Contains(got, `"isError":true`) {
		t.Errorf("tools/call's answer = %q, want the echo", got)
	}
	select {
	case err := <-p.exited:
		if err != nil {
			t.Errorf("serve --stdio after its input ended: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("serve --stdio did not exit after its input ended")
	}
}
