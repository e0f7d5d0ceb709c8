// Command client is the MCP conformance suite's client under test: a thin
// adapter over the public host API. The suite runs it with the mock
// server's URL as the last argument, the scenario name in
// MCP_CONFORMANCE_SCENARIO and scenario data (JSON) in
// MCP_CONFORMANCE_CONTEXT.
//
// It holds no protocol code of its own: it builds a one-server
// configuration, starts a host.Host with the options a person would set
// (auth, an elicitation prompter) and does ordinary operations — list
// tools, call them, read resources, get prompts. Whatever the suite checks
// on the wire is therefore done by the host, so a pass proves the product.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/oauth"
)

// serverName is the name of the one configured server.
const serverName = "conformance"

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: client <server-url>  (scenario in $MCP_CONFORMANCE_SCENARIO)")
		os.Exit(2)
	}
	url := os.Args[len(os.Args)-1]
	scenario := os.Getenv("MCP_CONFORMANCE_SCENARIO")
	var cctx map[string]any
	if raw := os.Getenv("MCP_CONFORMANCE_CONTEXT"); raw != "" {
		if err := json.Unmarshal([]byte(raw), &cctx); err != nil {
			fmt.Fprintf(os.Stderr, "client: MCP_CONFORMANCE_CONTEXT is not JSON: %v\n", err)
			os.Exit(2)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := run(ctx, scenario, url, cctx); err != nil {
		fmt.Fprintf(os.Stderr, "client: scenario %q: %v\n", scenario, err)
		os.Exit(1)
	}
}

// run maps a scenario to host operations.
func run(ctx context.Context, scenario, url string, cctx map[string]any) error {
	opts := &host.Options{
		Logger:    slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug})),
		ToolsWait: 30 * time.Second,
		// The suite's servers answer at once; a failure should show, not
		// be retried into a timeout.
		StartupTimeout: 30 * time.Second,
		Prompter:       acceptPrompter{scenario: scenario},
		ClientName:     "switchboard-conformance",
	}
	if strings.HasPrefix(scenario, "auth/") {
		a, err := authOptions(scenario, cctx)
		if err != nil {
			return err
		}
		a.Logger, a.ClientName = opts.Logger, opts.ClientName
		opts.Authorizer = oauth.New(a)
	}
	h := host.New(oneServer(url, config.TypeHTTP), opts)
	defer h.Close()

	switch scenario {
	case "json-schema-2020-12-preservation":
		return echoSchema(ctx, h)
	case "http-custom-headers":
		if _, err := tools(ctx, h); err != nil {
			return err
		}
		for _, c := range toolCalls(cctx) {
			if _, err := h.CallTool(ctx, serverName, c.name, c.args); err != nil {
				fmt.Fprintf(os.Stderr, "client: call %s: %v\n", c.name, err)
			}
		}
		return nil
	case "sep-2640-client-no-prefetch":
		// A person looks at what skills there are and loads none.
		_, err := skills(ctx, h)
		return err
	case "sep-2640-client-verify-digest", "sep-2640-client-verify-size", "sep-2640-client-verify-frontmatter":
		// A person loads the first skill; the host must refuse tampered files.
		list, err := skills(ctx, h)
		if err != nil {
			return err
		}
		if _, err := h.LoadSkill(ctx, list[0]); err != nil {
			fmt.Fprintf(os.Stderr, "client: load %s: %v\n", list[0].URI, err)
		}
		return nil
	case "sep-2322-client-request-state":
		for _, name := range []string{"test_mrtr_echo_state", "test_mrtr_no_state", "test_mrtr_unrelated", "test_mrtr_no_result_type"} {
			if _, err := h.CallTool(ctx, serverName, name, map[string]any{}); err != nil {
				fmt.Fprintf(os.Stderr, "client: call %s: %v\n", name, err)
			}
		}
		return nil
	}
	return everything(ctx, h, scenario)
}

// everything is what a person's session does: list tools and call the
// ones the scenario offers, then list and read resources and prompts.
func everything(ctx context.Context, h *host.Host, scenario string) error {
	list, err := tools(ctx, h)
	if err != nil {
		return err
	}
	args := map[string]any{}
	switch scenario {
	case "tools_call":
		args = map[string]any{"a": 5, "b": 3}
	case "http-invalid-tool-headers":
		args = map[string]any{"region": "us-west1"}
	case "initialize", "request-metadata", "json-schema-ref-no-deref":
		return nil // the handshake and the listing are the scenario
	}
	for _, t := range list {
		res, err := h.CallTool(ctx, serverName, t.Name, args)
		if err != nil {
			if strings.HasPrefix(scenario, "auth/") || scenario == "tools_call" {
				return fmt.Errorf("call %s: %w", t.Name, err)
			}
			fmt.Fprintf(os.Stderr, "client: call %s: %v\n", t.Name, err)
			continue
		}
		if res.IsError {
			fmt.Fprintf(os.Stderr, "client: call %s: tool error\n", t.Name)
		}
	}
	if scenario != "http-standard-headers" {
		return nil
	}
	if rs, _, err := h.Resources(ctx); err == nil && len(rs) > 0 {
		if _, err := h.ReadResource(ctx, serverName, rs[0].Resource.URI); err != nil {
			fmt.Fprintf(os.Stderr, "client: read %s: %v\n", rs[0].Resource.URI, err)
		}
	}
	if ps, _, err := h.Prompts(ctx); err == nil && len(ps) > 0 {
		if _, err := h.GetPrompt(ctx, serverName, ps[0].Prompt.Name, map[string]string{}); err != nil {
			fmt.Fprintf(os.Stderr, "client: prompt %s: %v\n", ps[0].Prompt.Name, err)
		}
	}
	return nil
}

// tools lists the server's tools, failing with the server's state when it
// did not connect.
func tools(ctx context.Context, h *host.Host) ([]*mcp.Tool, error) {
	list, err := h.Tools(ctx)
	if err != nil {
		return nil, err
	}
	var out []*mcp.Tool
	for _, t := range list.Tools {
		out = append(out, t.Tool)
	}
	if len(out) == 0 && len(list.Warnings) > 0 {
		return nil, fmt.Errorf("%s", strings.Join(list.Warnings, "; "))
	}
	for _, st := range h.Status() {
		if st.State != host.StateConnected {
			return nil, fmt.Errorf("server is %s: %s", st.State, st.Reason)
		}
	}
	return out, nil
}

// skills lists the server's skills, failing when there are none.
func skills(ctx context.Context, h *host.Host) ([]host.Skill, error) {
	if _, err := tools(ctx, h); err != nil {
		return nil, err
	}
	list, err := h.Skills(ctx, serverName)
	if err != nil {
		return nil, err
	}
	if len(list) == 0 {
		return nil, fmt.Errorf("the server lists no skills")
	}
	return list, nil
}

// echoSchema sends the focal tool's input schema, as the host kept it,
// back through the echo tool.
func echoSchema(ctx context.Context, h *host.Host) error {
	list, err := tools(ctx, h)
	if err != nil {
		return err
	}
	for _, t := range list {
		if t.Name == "json_schema_2020_12_tool" {
			_, err := h.CallTool(ctx, serverName, "json_schema_echo", map[string]any{"schema": t.InputSchema})
			return err
		}
	}
	return fmt.Errorf("no tool json_schema_2020_12_tool")
}

type toolCall struct {
	name string
	args map[string]any
}

// toolCalls reads {"toolCalls": [{"name", "arguments"}]} from the context.
func toolCalls(cctx map[string]any) []toolCall {
	raw, _ := cctx["toolCalls"].([]any)
	var out []toolCall
	for _, item := range raw {
		obj, _ := item.(map[string]any)
		name, _ := obj["name"].(string)
		args, _ := obj["arguments"].(map[string]any)
		if args == nil {
			args = map[string]any{}
		}
		out = append(out, toolCall{name, args})
	}
	return out
}

// oneServer is a resolved configuration holding one user-scope remote server.
func oneServer(url string, typ config.Type) *config.Resolved {
	def := config.Server{Type: typ, URL: url}
	return &config.Resolved{Servers: []config.ResolvedServer{{
		Name: serverName, Written: def, Effective: def,
		Scope: config.ScopeUser, Trust: config.TrustUser, Availability: config.Available,
	}}}
}

// acceptPrompter accepts every elicitation, as a person who clicks "OK"
// on the form as shown: with no fields filled, so the schema's defaults
// (SEP-1034) are what the host must supply; for the request-state
// scenario it confirms.
type acceptPrompter struct{ scenario string }

func (p acceptPrompter) Elicit(_ context.Context, _ string, _ *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	if p.scenario == "sep-2322-client-request-state" {
		return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"confirmed": true}}, nil
	}
	return &mcp.ElicitResult{Action: "accept", Content: map[string]any{}}, nil
}
