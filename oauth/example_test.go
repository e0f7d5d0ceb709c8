package oauth_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"time"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/oauth"
)

// A Client is a host's Authorizer. Here it has no stored token and no way
// to ask a user (no Options.Authorize), so a server that asks for OAuth
// fails with a *LoginRequiredError: the application's ErrorHint turns it
// into advice in the server's status.
func Example() {
	// An MCP server that wants OAuth: every request is refused with a
	// Bearer challenge naming its metadata.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="http://`+r.Host+`/.well-known/oauth-protected-resource"`)
		w.WriteHeader(http.StatusUnauthorized)
	}))
	defer srv.Close()

	def := config.Server{Type: config.TypeHTTP, URL: srv.URL + "/mcp"}
	cfg := &config.Resolved{Servers: []config.ResolvedServer{{
		Name: "docs", Written: def, Effective: def,
		Scope: config.ScopeUser, Trust: config.TrustUser, Availability: config.Available,
	}}}
	h := host.New(cfg, &host.Options{
		Authorizer: oauth.New(&oauth.Options{}), // Dir: where tokens are kept
		ErrorHint: func(_ string, err error) string {
			var lr *oauth.LoginRequiredError
			if errors.As(err, &lr) {
				return "log in to " + lr.Server + " first"
			}
			return ""
		},
	})
	defer h.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	h.WaitReady(ctx)

	st := h.Status()[0]
	fmt.Println(st.State)
	fmt.Println(st.Reason[strings.LastIndex(st.Reason, ": ")+2:])
	// Output:
	// error
	// docs asks for OAuth authorization, and there is no usable token; log in to docs first
}

// OAuth tokens live in one file per server under the directory given as
// Options.Dir; Logout removes it.
func ExampleTokenFile() {
	dir := filepath.Join("home", ".switchboard", "oauth")
	fmt.Println(filepath.ToSlash(oauth.TokenFile(dir, "github")))
	fmt.Println(filepath.ToSlash(oauth.TokenFile(dir, "team/tools")))
	// Output:
	// home/.switchboard/oauth/github.json
	// home/.switchboard/oauth/team%2Ftools.json
}

// A server whose tokens are bound to a key (DPoP) has that key stored next
// to its token file; Logout removes both.
func ExampleDPoPKeyFile() {
	dir := filepath.Join("home", ".switchboard", "oauth")
	fmt.Println(filepath.ToSlash(oauth.TokenFile(dir, "corp")))
	fmt.Println(filepath.ToSlash(oauth.DPoPKeyFile(dir, "corp")))
	// Output:
	// home/.switchboard/oauth/corp.json
	// home/.switchboard/oauth/corp.dpop.key
}
