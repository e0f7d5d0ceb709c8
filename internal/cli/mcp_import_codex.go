package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/switchboard-mcp/switchboard/config"
)

// Codex keeps its servers as [mcp_servers.NAME] tables of a TOML file,
// which Switchboard has no parser for: `mcp import --from codex` asks Codex
// itself, whose `codex mcp list --json` prints every server it reads (the
// user's file, and in a trusted project that project's .codex/config.toml
// too), and translates that.

// codexConfig is the file Codex keeps the user's servers in:
// $CODEX_HOME/config.toml, else ~/.codex/config.toml.
func codexConfig(f *Factory) string {
	if f.Getenv != nil {
		if dir, ok := f.Getenv("CODEX_HOME"); ok && dir != "" {
			return filepath.Join(dir, "config.toml")
		}
	}
	return filepath.Join(f.HomeDir, ".codex", "config.toml")
}

// codexServer is one server of `codex mcp list --json` (Codex 0.171).
type codexServer struct {
	Name      string `json:"name"`
	Enabled   *bool  `json:"enabled"`
	Transport struct {
		Type    string            `json:"type"` // stdio or streamable_http
		Command string            `json:"command"`
		Args    []string          `json:"args"`
		Env     map[string]string `json:"env"`
		EnvVars []string          `json:"env_vars"`
		Cwd     string            `json:"cwd"`
		URL     string            `json:"url"`
		// The bearer token's variable; headers as given, and headers whose
		// value is a variable's.
		BearerTokenEnvVar string            `json:"bearer_token_env_var"`
		HTTPHeaders       map[string]string `json:"http_headers"`
		EnvHTTPHeaders    map[string]string `json:"env_http_headers"`
		HTTPHeadersHelper json.RawMessage   `json:"http_headers_helper"`
	} `json:"transport"`
	StartupTimeoutSec *float64 `json:"startup_timeout_sec"`
	ToolTimeoutSec    *float64 `json:"tool_timeout_sec"`
	AuthStatus        string   `json:"auth_status"`
	// The tool filter, which only `codex mcp get NAME --json` prints
	// (codexTools); toolsUnread says it could not be read.
	EnabledTools  []string `json:"enabled_tools"`
	DisabledTools []string `json:"disabled_tools"`
	toolsUnread   bool
}

// codexEntries are the servers Codex reads: the user's (listed from the
// home directory, where no project's file applies) into user scope unless
// --scope says otherwise, and those only a run in the workspace adds or
// changes — a trusted project's .codex/config.toml — as the repository's.
func codexEntries(ctx context.Context, f *Factory, root string) ([]importEntry, error) {
	bin := onPath(f, "codex")
	if bin == "" {
		return nil, Failuref("install Codex (npm install -g @openai/codex), or add its servers with switchboard mcp add",
			"codex is not on your PATH: Switchboard reads Codex's servers (TOML) through codex mcp list --json")
	}
	user, err := codexList(ctx, bin, f.HomeDir)
	if err != nil {
		return nil, err
	}
	codexTools(ctx, bin, f.HomeDir, user)
	file := codexConfig(f)
	var out []importEntry
	mine := map[string]string{}
	for _, s := range user {
		def, notes := codexDef(s)
		mine[s.Name] = string(def)
		out = append(out, importEntry{Name: s.Name, File: file, Author: authorUser, def: def, Notes: notes, scope: config.ScopeUser})
	}
	repoFile := filepath.Join(root, ".codex", "config.toml")
	if root == "" || root == f.HomeDir || !regularFile(repoFile) {
		return out, nil
	}
	all, err := codexList(ctx, bin, root)
	if err != nil {
		return nil, err
	}
	codexTools(ctx, bin, root, all)
	for _, s := range all {
		def, notes := codexDef(s)
		if mine[s.Name] == string(def) {
			continue
		}
		e := importEntry{Name: s.Name, File: repoFile, Author: authorRepo, def: def, Notes: notes}
		if _, ok := mine[s.Name]; ok {
			e.Reason = yoursWins(f, file)
			e.def = nil
		}
		out = append(out, e)
	}
	return out, nil
}

// codexTools fills in each server's enabled_tools and disabled_tools,
// which `codex mcp list --json` leaves out (Codex 0.171), from `codex mcp
// get NAME --json` in dir; a server whose filter cannot be read is marked
// so (the import says it), not taken as having none.
// Four at a time: each is a Codex start (~0.4 s).
func codexTools(ctx context.Context, bin, dir string, servers []codexServer) {
	var g errgroup.Group
	g.SetLimit(4)
	for i := range servers {
		s := &servers[i] // each goroutine writes its own server only
		g.Go(func() error {
			out, err := codexRun(ctx, bin, dir, "mcp", "get", s.Name, "--json")
			var got struct {
				Name          string   `json:"name"`
				EnabledTools  []string `json:"enabled_tools"`
				DisabledTools []string `json:"disabled_tools"`
			}
			if err != nil || json.Unmarshal(out, &got) != nil || got.Name != s.Name {
				s.toolsUnread = true
				return nil
			}
			s.EnabledTools, s.DisabledTools = got.EnabledTools, got.DisabledTools
			return nil
		})
	}
	_ = g.Wait()
}

// codexRun runs codex with args in dir and returns what it printed; the
// error ends with the last line of its stderr.
func codexRun(ctx context.Context, bin, dir string, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		msg := strings.TrimSpace(stderr.String())
		if i := strings.LastIndexByte(msg, '\n'); i >= 0 {
			msg = msg[i+1:]
		}
		return nil, fmt.Errorf("%w: %s", err, msg)
	}
	return out, nil
}

// codexList runs `codex mcp list --json` in dir.
func codexList(ctx context.Context, bin, dir string) ([]codexServer, error) {
	out, err := codexRun(ctx, bin, dir, "mcp", "list", "--json")
	if err != nil {
		return nil, Failuref("run codex mcp list yourself to see why", "codex mcp list --json failed: %v", err)
	}
	var servers []codexServer
	if err := json.Unmarshal(out, &servers); err != nil {
		return nil, Failuref("update Codex, or add its servers with switchboard mcp add", "codex mcp list --json printed what Switchboard cannot read: %v", err)
	}
	return servers, nil
}

// codexDef is s as a Switchboard definition (JSON), with notes on what
// was changed on the way.
func codexDef(s codexServer) ([]byte, []string) {
	// In the order a person writes them.
	var def struct {
		Type           string            `json:"type,omitempty"`
		Command        string            `json:"command,omitempty"`
		Args           []string          `json:"args,omitempty"`
		Env            map[string]string `json:"env,omitempty"`
		Cwd            string            `json:"cwd,omitempty"`
		EnvPassthrough []string          `json:"env_passthrough,omitempty"`
		URL            string            `json:"url,omitempty"`
		Headers        map[string]string `json:"headers,omitempty"`
		Enabled        *bool             `json:"enabled,omitempty"`
		StartupTimeout int64             `json:"startup_timeout,omitempty"`
		Timeout        int64             `json:"timeout,omitempty"`
		EnabledTools   []string          `json:"enabledTools,omitempty"`
		DisabledTools  []string          `json:"disabledTools,omitempty"`
	}
	var notes []string
	t := s.Transport
	switch t.Type {
	case "streamable_http":
		def.Type, def.URL = "http", t.URL
		headers := map[string]string{}
		for k, v := range t.HTTPHeaders {
			headers[k] = v
		}
		for k, v := range t.EnvHTTPHeaders {
			headers[k] = "${" + v + "}"
		}
		if t.BearerTokenEnvVar != "" {
			headers["Authorization"] = "Bearer ${" + t.BearerTokenEnvVar + "}"
		}
		if len(headers) > 0 {
			def.Headers = headers
		}
		if len(t.HTTPHeadersHelper) > 0 && string(t.HTTPHeadersHelper) != "null" {
			notes = append(notes, "dropped Codex's http_headers_helper: give it a \"headersHelper\" command of Switchboard's own if it needs one")
		}
		if s.AuthStatus == "o_auth" || s.AuthStatus == "oauth" {
			notes = append(notes, "Codex signed in to it with OAuth: run switchboard mcp login "+s.Name)
		}
	default: // stdio, and what a later Codex adds: the check says so
		if t.Type != "stdio" {
			def.Type = t.Type
		}
		def.Command, def.Args, def.Env, def.Cwd, def.EnvPassthrough = t.Command, t.Args, t.Env, t.Cwd, t.EnvVars
	}
	if s.Enabled != nil && !*s.Enabled {
		def.Enabled = s.Enabled
	}
	ms := func(sec *float64) int64 {
		if sec == nil || *sec <= 0 || math.IsInf(*sec, 0) || *sec > 1e9 {
			return 0
		}
		return int64(math.Round(*sec * 1000))
	}
	def.StartupTimeout, def.Timeout = ms(s.StartupTimeoutSec), ms(s.ToolTimeoutSec)
	// Codex's filter names tools; Switchboard's takes globs, of which a
	// name is one. An empty enabled_tools lets no tool through, where an
	// empty enabledTools is no filter: "disabledTools": ["*"] says it.
	def.EnabledTools, def.DisabledTools = s.EnabledTools, s.DisabledTools
	if s.EnabledTools != nil && len(s.EnabledTools) == 0 {
		def.EnabledTools, def.DisabledTools = nil, []string{"*"}
		notes = append(notes, `Codex's enabled_tools is empty, which shows no tool: imported as "disabledTools": ["*"]`)
	}
	if len(def.EnabledTools) > 0 || len(def.DisabledTools) > 0 {
		notes = append(notes, "Codex's enabled_tools/disabled_tools became enabledTools/disabledTools")
	}
	if s.toolsUnread {
		notes = append(notes, "its enabled_tools/disabled_tools, if it has any, could not be read (codex mcp get "+s.Name+" --json failed): check them with codex mcp get "+s.Name)
	}
	b, _ := marshalNoEscape(def)
	return bytes.TrimSpace(b), notes
}

// onPath is the file prog names on the user's PATH, "" when no folder of
// it holds an executable prog. As os/exec's LookPath since Go 1.19, a
// relative folder ("", ".") is not looked in: the current directory may
// be a repository's, which could plant the program there.
func onPath(f *Factory, prog string) string {
	path, _ := f.Getenv("PATH")
	for _, dir := range filepath.SplitList(path) {
		if !filepath.IsAbs(dir) {
			continue
		}
		p := filepath.Join(dir, prog)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p
		}
	}
	return ""
}
