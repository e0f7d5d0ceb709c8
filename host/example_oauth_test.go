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

// A server whose tokens are bound to a key (DPoP) has that key stored next
// to its token file; Logout removes both.
func ExampleDPoPKeyFile() {
	dir := filepath.Join("home", ".switchboard", "oauth")
	fmt.Println(filepath.ToSlash(host.TokenFile(dir, "corp")))
	fmt.Println(filepath.ToSlash(host.DPoPKeyFile(dir, "corp")))
	// Output:
	// home/.switchboard/oauth/corp.json
	// home/.switchboard/oauth/corp.dpop.key
}
