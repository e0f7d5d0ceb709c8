package config_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/switchboard-mcp/switchboard/config"
)

// SetServer adds one entry and leaves the rest of a hand-written file, its
// comments and trailing commas included, exactly as it was.
func ExampleSetServer() {
	dir, _ := os.MkdirTemp("", "switchboard-example")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "mcp.json")
	os.WriteFile(path, []byte(`{
  // my servers
  "mcpServers": {
    "time": {"command": "uvx", "args": ["mcp-server-time"]}, // the clock
  },
}
`), 0o600)

	def := json.RawMessage(`{"type":"http","url":"https://api.githubcopilot.com/mcp/"}`)
	if err := config.SetServer(path, []string{"mcpServers"}, "github", def); err != nil {
		fmt.Println(err)
	}
	b, _ := os.ReadFile(path)
	fmt.Print(string(b))
	// Output:
	// {
	//   // my servers
	//   "mcpServers": {
	//     "time": {"command": "uvx", "args": ["mcp-server-time"]}, // the clock
	//     "github": {
	//       "type": "http",
	//       "url": "https://api.githubcopilot.com/mcp/"
	//     },
	//   },
	// }
}

// RemoveServer takes an entry out together with the comments that belong
// to it.
func ExampleRemoveServer() {
	dir, _ := os.MkdirTemp("", "switchboard-example")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "mcp.json")
	os.WriteFile(path, []byte(`{
  "mcpServers": {
    // about to go
    "old": {"command": "old-mcp"},
    "time": {"command": "uvx", "args": ["mcp-server-time"]},
  },
}
`), 0o600)

	found, err := config.RemoveServer(path, []string{"mcpServers"}, "old")
	fmt.Println(found, err)
	b, _ := os.ReadFile(path)
	fmt.Print(string(b))
	// Output:
	// true <nil>
	// {
	//   "mcpServers": {
	//     "time": {"command": "uvx", "args": ["mcp-server-time"]},
	//   },
	// }
}

// SetWorkspaceEnablement edits <root>/.switchboard/workspace.json: a name
// goes on one list and off the other, and a list left empty goes.
func ExampleSetWorkspaceEnablement() {
	root, _ := os.MkdirTemp("", "switchboard-example")
	defer os.RemoveAll(root)

	config.SetWorkspaceEnablement(root, "github", true)
	config.SetWorkspaceEnablement(root, "time", false)
	config.SetWorkspaceEnablement(root, "github", false)
	b, _ := os.ReadFile(config.WorkspaceFile(root))
	fmt.Print(string(b))
	// Output:
	// {
	//   "disabledMcpServers": ["time", "github"]
	// }
}
