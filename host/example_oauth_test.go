package host_test

import (
	"fmt"
	"path/filepath"

	"github.com/switchboard-mcp/switchboard/host"
)

// OAuth tokens live in one file per server under the directory given as
// OAuthOptions.Dir; Logout removes it.
func ExampleTokenFile() {
	dir := filepath.Join("home", ".switchboard", "oauth")
	fmt.Println(filepath.ToSlash(host.TokenFile(dir, "github")))
	fmt.Println(filepath.ToSlash(host.TokenFile(dir, "team/tools")))
	// Output:
	// home/.switchboard/oauth/github.json
	// home/.switchboard/oauth/team%2Ftools.json
}
