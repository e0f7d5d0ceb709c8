package cli

import (
	"bufio"
	"bytes"
	"context"
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
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	script := strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"script","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"a__echo","arguments":{"text":"piped"}}}`,
	}, "\n") + "\n"
	cmd := w.command(t, "serve", "--stdio")
	cmd.Stdin = strings.NewReader(script)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	done := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
			cmd.Process.Kill()
		case <-done:
		}
	}()
	out, err := cmd.Output()
	close(done)
	if ctx.Err() != nil {
		t.Fatalf("serve --stdio did not exit after its input ended; stderr:\n%s", stderr.String())
	}
	if err != nil {
		t.Fatalf("serve --stdio: %v; stderr:\n%s", err, stderr.String())
	}
	answers := map[int]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var m struct {
			ID *int `json:"id"`
		}
		if json.Unmarshal(sc.Bytes(), &m) == nil && m.ID != nil {
			answers[*m.ID] = sc.Text()
		}
	}
	if !strings.Contains(answers[1], `"serverInfo"`) {
		t.Errorf("initialize's answer = %q", answers[1])
	}
	if !strings.Contains(answers[2], `"a__echo"`) {
		t.Errorf("tools/list's answer = %q, want a__echo in it", answers[2])
	}
	if !strings.Contains(answers[3], "piped") || strings.Contains(answers[3], `"isError":true`) {
		t.Errorf("tools/call's answer = %q, want the echo", answers[3])
	}
}
