package cli

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/npmtest"
)

// tsAppsResult is what testdata/gateway/ts_apps_client.mjs saw.
type tsAppsResult struct {
	Tools map[string]struct {
		Meta map[string]any `json:"meta"`
	} `json:"tools"`
	Resources []struct {
		URI      string `json:"uri"`
		MIMEType string `json:"mimeType"`
	} `json:"resources"`
	Reads map[string][]struct {
		URI      string         `json:"uri"`
		MIMEType string         `json:"mimeType"`
		Meta     map[string]any `json:"meta"`
		Text     string         `json:"text"`
	} `json:"reads"`
	Calls map[string]struct {
		IsError           bool           `json:"isError"`
		StructuredContent map[string]any `json:"structuredContent"`
		Text              string         `json:"text"`
	} `json:"calls"`
}

// appsWorld configures two servers that run the MCP Apps example server
// @modelcontextprotocol/server-basic-vanillajs: both serve the same
// ui://get-time/mcp-app.html, as two servers built from one template do.
func appsWorld(t *testing.T) (*gatewayWorld, npmtest.Paths) {
	t.Helper()
	p := npmtest.Install(t)
	w := newGatewayWorld(t)
	m := map[string]any{}
	for _, n := range []string{"basic", "clock"} {
		m[n] = map[string]any{"type": "stdio", "command": p.Node, "args": []string{p.BasicApp, "--stdio"}}
	}
	writeJSON(t, filepath.Join(w.sbHome, "mcp.json"), map[string]any{"mcpServers": m})
	w.permissions(t, []string{"mcp__basic", "mcp__clock"}, nil)
	return w, p
}

// TestGatewayMCPApps: an Apps-capable TypeScript SDK client behind `serve
// --stdio` finds each tool's UI link, reads the resource it names and gets
// the server's HTML with its MIME type, for two servers whose Apps share
// one ui:// URI; the tool's result carries the structured content the App
// renders, beside the envelope the model reads.
func TestGatewayMCPApps(t *testing.T) {
	w, p := appsWorld(t)
	html, err := os.ReadFile(filepath.Join(filepath.Dir(p.BasicApp), "mcp-app.html"))
	if err != nil {
		t.Fatal(err)
	}
	script, err := filepath.Abs("testdata/gateway/ts_apps_client.mjs")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, p.Node, append([]string{script, switchboardBin(t)}, w.args("serve", "--stdio")...)...)
	cmd.Env = append(append([]string{}, w.env...), "SDK="+p.SDK)
	cmd.Dir = w.ws
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("ts apps client: %v\nstdout: %s\nstderr: %s", err, out, stderr.String())
	}
	var res tsAppsResult
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("ts apps client output %q: %v", out, err)
	}

	for _, server := range []string{"basic", "clock"} {
		tool := server + "__get-time"
		served := "ui://" + server + "/get-time/mcp-app.html"
		meta := res.Tools[tool].Meta
		ui, _ := meta["ui"].(map[string]any)
		if ui["resourceUri"] != served || meta[host.LegacyUIResourceKey] != served {
			t.Errorf("%s _meta = %v, want both links to name %s", tool, meta, served)
		}
		listed := false
		for _, r := range res.Resources {
			listed = listed || (r.URI == served && r.MIMEType == host.AppMIMEType)
		}
		if !listed {
			t.Errorf("resources/list lacks %s (%s): %+v", served, host.AppMIMEType, res.Resources)
		}
		read := res.Reads[served]
		if len(read) != 1 || read[0].URI != served || read[0].MIMEType != host.AppMIMEType || read[0].Text != string(html) {
			t.Errorf("read %s: %d contents, want the server's HTML (%d bytes) as %s", served, len(read), len(html), host.AppMIMEType)
			for _, c := range read {
				t.Logf("  uri=%s mimeType=%s text=%.80q", c.URI, c.MIMEType, c.Text)
			}
		}
		c := res.Calls[tool]
		if c.IsError || c.StructuredContent["time"] == nil || c.StructuredContent["time"] == "" {
			t.Errorf("call %s: %+v, want the structured content {time} the App shows", tool, c)
		}
		if !strings.Contains(c.Text, `<mcp_response server="`+server+`" tool="get-time" trust="untrusted">`) {
			t.Errorf("call %s: content %q, want the envelope", tool, c.Text)
		}
	}
}

// TestToolsJSONShowsUI: `tools --json` names the ui:// resource of a tool
// that has an MCP App, and leaves the key out for one without.
func TestToolsJSONShowsUI(t *testing.T) {
	w, _ := appsWorld(t)
	out, err := w.command(t, "--json", "tools", "--server", "basic").Output()
	if err != nil {
		t.Fatalf("tools --json: %v", err)
	}
	var tools []map[string]any
	if err := json.Unmarshal(out, &tools); err != nil {
		t.Fatalf("tools --json: %v\n%s", err, out)
	}
	found := false
	for _, tl := range tools {
		if tl["name"] == "mcp__basic__get-time" {
			found = true
			if tl["ui"] != "ui://get-time/mcp-app.html" {
				t.Errorf("mcp__basic__get-time ui = %v, want ui://get-time/mcp-app.html", tl["ui"])
			}
		}
	}
	if !found {
		t.Fatalf("no mcp__basic__get-time in %s", out)
	}
}
