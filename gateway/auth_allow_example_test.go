package gateway_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/switchboard-mcp/switchboard/gateway"
)

// A team principal answers "always": the allow rule goes to that
// principal's entry of the auth file, which keeps its comments, and the
// Auth applies it at once.
func ExampleAuth_AllowFor() {
	dir, _ := os.MkdirTemp("", "sb")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, gateway.AuthFileName)
	os.WriteFile(path, []byte("// the team's gateway\n{\"principals\": {\"group:eng\": {\"deny\": [\"mcp__prod_db\"]}}}\n"), 0o600)
	key, _ := gateway.AddKey(path, "alice", nil, time.Time{})

	a := gateway.NewAuth(&gateway.AuthOptions{File: path})
	alice, _ := a.Authenticate(context.Background(), key)
	if a.CanAllowFor(alice) {
		// "alice's entry in ~/.switchboard/gateway-auth.json" for the
		// default file: the question says it.
		where, _, _ := strings.Cut(a.AllowWhere(alice.Name), " in ")
		fmt.Println("always writes to", where)
		if err := a.AllowFor(alice.Name, "mcp__github__merge_pull_request"); err != nil {
			fmt.Println(err)
		}
	}
	for _, r := range a.Scoped().For("alice", nil) {
		fmt.Println(r.List, r.Text)
	}
	b, _ := os.ReadFile(path)
	fmt.Println(strings.HasPrefix(string(b), "// the team's gateway"))
	// Output:
	// always writes to alice's entry
	// allow mcp__github__merge_pull_request
	// true
}
