package config_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/switchboard-mcp/switchboard/config"
)

func ExampleLoad() {
	dir, _ := os.MkdirTemp("", "switchboard-example")
	defer os.RemoveAll(dir)
	home := filepath.Join(dir, "home")
	proj := filepath.Join(dir, "proj")
	os.MkdirAll(filepath.Join(home, ".switchboard"), 0o755)
	os.MkdirAll(filepath.Join(proj, ".git"), 0o755)

	// The user's own servers, JSONC with comments and trailing commas.
	os.WriteFile(filepath.Join(home, ".switchboard", "mcp.json"), []byte(`{
  "mcpServers": {
    // the user's GitHub server
    "github": {
      "command": "npx",
      "args": ["-y", "@modelcontextprotocol/server-github"],
      "env": {"GITHUB_TOKEN": "${GITHUB_TOKEN}"},
    },
    "time": {"command": "uvx", "args": ["mcp-server-time"]},
  },
}`), 0o644)
	// The repository's servers: project scope, approval needed (launch trust).
	os.WriteFile(filepath.Join(proj, ".mcp.json"), []byte(`{
  "mcpServers": {
    "time": {"command": "./tools/time-server"},
    "docs": {"type": "streamable-http", "url": "https://docs.example.com/mcp"}
  },
  "disabledMcpServers": ["github"]
}`), 0o644)

	r, err := config.Load(&config.LoadOptions{
		HomeDir:    home,
		Cwd:        proj,
		ManagedDir: filepath.Join(dir, "etc"),
		LookupEnv:  func(string) (string, bool) { return "", false },
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, s := range r.Servers {
		fmt.Printf("%s: %s scope, %s trust, %s, %s", s.Name, s.Scope, s.Trust, s.Effective.Type, s.Availability)
		if s.DisabledReason != "" {
			fmt.Printf(" (%s)", strings.ReplaceAll(s.DisabledReason, proj+string(filepath.Separator), ""))
		}
		fmt.Println()
	}
	for _, d := range r.Server("github").Diagnostics {
		fmt.Printf("%s: %s\n", d.Severity, d.Message)
	}
	fmt.Println("time shadows:", r.Server("time").Shadows)
	// Output:
	// docs: project scope, repo trust, http, available
	// github: user scope, user trust, stdio, disabled (disabledMcpServers in .mcp.json)
	// time: project scope, repo trust, stdio, available
	// warning: Missing environment variables: GITHUB_TOKEN
	// time shadows: [user]
}

func ExampleExpand() {
	env := map[string]string{"API_TOKEN": "t0k", "EMPTY": ""}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	for _, s := range []string{
		"Bearer ${API_TOKEN}",
		"${HOST:-localhost}:${PORT:-8080}",
		"[${EMPTY:-unused}]",
		"${DATABASE_URL}",
		"$${API_TOKEN} ${lower}",
		"${PRIMARY:-${API_TOKEN}}",
	} {
		out, missing := config.Expand(s, lookup)
		fmt.Printf("%-36q -> %q missing=%v\n", s, out, missing)
	}
	// Output:
	// "Bearer ${API_TOKEN}"                -> "Bearer t0k" missing=[]
	// "${HOST:-localhost}:${PORT:-8080}"   -> "localhost:8080" missing=[]
	// "[${EMPTY:-unused}]"                 -> "[]" missing=[]
	// "${DATABASE_URL}"                    -> "${DATABASE_URL}" missing=[DATABASE_URL]
	// "$${API_TOKEN} ${lower}"             -> "${API_TOKEN} ${lower}" missing=[]
	// "${PRIMARY:-${API_TOKEN}}"           -> "t0k" missing=[]
}
