package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard"
	"github.com/switchboard-mcp/switchboard/internal/testserver"
	"github.com/switchboard-mcp/switchboard/toolsurface"
)

// callPathNames are the server and tool names the three call paths must
// agree on: a server whose name is not a legal part of a tool name, a
// tool whose name holds the separator, one whose name is cut to 64, and one
// in another script.
var callPathNames = []struct{ server, tool string }{
	{"my.srv", "echo"},
	{"ab", "a__b"},
	{"srv", "fetch_the_repository_branch_protection_required_status_checks_list"},
	{"uni", "données_café"},
}

// presented is what one path gave the model for one call, and the name
// it was recorded under.
type presented struct {
	Envelope string // the spill file's path replaced by <spill>
	Spill    string // the spill file's name less its time and random part, "" when none
	Spilled  string // the spill file's contents
	Name     string // the rule name: Result.Name, the audit line's tool
}

var spillLine = regexp.MustCompile(`(?m)^File: (\S+)$`)

// present normalizes an envelope: the spill file it names differs by its
// time and random part, and by the session of the process that wrote it.
func present(t *testing.T, env, name string) presented {
	t.Helper()
	p := presented{Envelope: env, Name: name}
	if m := spillLine.FindStringSubmatch(env); m != nil {
		b, err := os.ReadFile(m[1])
		if err != nil {
			t.Fatalf("the spill file the envelope names: %v", err)
		}
		p.Spilled = string(b)
		base := filepath.Base(m[1])
		p.Spill = filepath.Base(filepath.Dir(filepath.Dir(m[1]))) + "/" + base[:strings.LastIndex(base[:strings.LastIndex(base, "-")], "-")]
		p.Envelope = strings.Replace(env, m[0], "File: <spill>", 1)
	}
	return p
}

// TestThreePathsPresentCallsAlike: the library (Switchboard.Call), the CLI
// (switchboard call) and the gateway (switchboard serve) make a call
// through one path, so for every name of callPathNames they give the
// model byte-identical envelopes, make the same spill decision (with
// MAX_MCP_OUTPUT_TOKENS=100 a 4 KB result goes to a file on each) and
// record the call under the same rule name (the library's Result.Name,
// the gateway's audit line).
func TestThreePathsPresentCallsAlike(t *testing.T) {
	w := newGatewayWorld(t)
	w.env = append(w.env, toolsurface.EnvMaxOutputTokens+"=100")
	servers := map[string]any{}
	var allow []string
	for _, n := range callPathNames {
		cmd, args := testserver.Command("longnames", "-names", n.tool)
		servers[n.server] = map[string]any{"command": cmd, "args": args}
		allow = append(allow, toolsurface.ToolName(n.server, n.tool))
	}
	writeJSON(t, filepath.Join(w.sbHome, "mcp.json"), map[string]any{"mcpServers": servers})
	w.permissions(t, allow, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	texts := map[string]string{"small": "hi", "large": strings.Repeat("four kilobytes ", 4096/15)}

	// The library.
	env := map[string]string{toolsurface.EnvMaxOutputTokens: "100"}
	sb, err := switchboard.Open(ctx, switchboard.Options{
		Workspace: w.ws, Home: w.sbHome, HomeDir: w.home, ManagedDir: filepath.Join(w.dir, "managed"),
		LookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok },
	})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	sb.Ready(ctx)
	library := map[string]presented{}
	for _, n := range callPathNames {
		for size, text := range texts {
			name := toolsurface.ToolName(n.server, n.tool)
			res, err := sb.Call(ctx, name, map[string]any{"text": text})
			if err != nil {
				t.Fatalf("library: %s: %v", name, err)
			}
			library[n.server+" "+size] = present(t, res.Text, res.Name)
		}
	}

	// The CLI, one process a call.
	cli := map[string]presented{}
	for _, n := range callPathNames {
		for size, text := range texts {
			name := toolsurface.ToolName(n.server, n.tool)
			args, _ := json.Marshal(map[string]any{"text": text})
			cmd := w.command(t, "call", "--json", name, string(args))
			var stderr strings.Builder
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("cli: %s: %v\n%s", name, err, stderr.String())
			}
			var got struct{ Envelope string }
			if err := json.Unmarshal(out, &got); err != nil {
				t.Fatalf("cli: %s: %v\n%s", name, err, out)
			}
			cli[n.server+" "+size] = present(t, got.Envelope, name)
		}
	}

	// The gateway, with an audit log.
	auditFile := filepath.Join(w.dir, "audit.jsonl")
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "three-paths"}, nil).Connect(ctx,
		&mcp.CommandTransport{Command: w.command(t, "serve", "--stdio", "--audit-log", auditFile)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	gw := map[string]presented{}
	var order []string
	for _, n := range callPathNames {
		for _, size := range []string{"small", "large"} {
			served := toolsurface.ServedName(n.server, n.tool, toolsurface.DefaultNameBudget)
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: served, Arguments: map[string]any{"text": texts[size]}})
			if err != nil || res.IsError || len(res.Content) != 1 {
				t.Fatalf("gateway: %s: %v %+v", served, err, res)
			}
			gw[n.server+" "+size] = present(t, res.Content[0].(*mcp.TextContent).Text, "")
			order = append(order, n.server+" "+size)
		}
	}
	cs.Close() // the audit log is written whole once serve has ended
	f, err := os.Open(auditFile)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for i := 0; sc.Scan(); i++ {
		var line struct{ Tool string }
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil || i >= len(order) {
			t.Fatalf("audit line %d: %v %s", i, err, sc.Bytes())
		}
		p := gw[order[i]]
		p.Name = line.Tool
		gw[order[i]] = p
	}

	for _, n := range callPathNames {
		for size := range texts {
			k := n.server + " " + size
			if size == "large" && library[k].Spill == "" {
				t.Errorf("%s: the library did not spill a 4 KB result over a limit of 100 tokens:\n%s", k, library[k].Envelope)
			}
			if diff := cmp.Diff(library[k], cli[k]); diff != "" {
				t.Errorf("%s: library and CLI differ (-library +cli):\n%s", k, diff)
			}
			if diff := cmp.Diff(library[k], gw[k]); diff != "" {
				t.Errorf("%s: library and gateway differ (-library +gateway):\n%s", k, diff)
			}
			if want := fmt.Sprintf(`<mcp_response server=%q tool=%q`, n.server, n.tool); !strings.HasPrefix(library[k].Envelope, want) {
				t.Errorf("%s: the envelope does not name the server's own names (%s):\n%s", k, want, library[k].Envelope)
			}
		}
	}
}
