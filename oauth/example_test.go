package oauth_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
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

// A Loopback receives the authorization server's redirect on 127.0.0.1:
// its RedirectURL and Authorize go into Options. Here the "browser" that
// show opens is an HTTP client, and the authorization server approves at
// once.
func ExampleNewLoopback() {
	lb, err := oauth.NewLoopback(func(authURL string) {
		// A real show opens the browser and prints the URL. The
		// authorization server would send the browser back to
		// redirect_uri with a code.
		u, _ := url.Parse(authURL)
		back := u.Query().Get("redirect_uri") + "?code=c1&state=" + u.Query().Get("state")
		go func() {
			if resp, err := http.Get(back); err == nil {
				resp.Body.Close()
			}
		}()
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer lb.Close()
	_ = &oauth.Options{RedirectURL: lb.RedirectURL, Authorize: lb.Authorize}

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	authURL := "https://as.example/authorize?" + url.Values{"redirect_uri": {lb.RedirectURL}, "state": {"s1"}}.Encode()
	back, err := lb.Authorize(ctx, "docs", authURL)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(back.Query().Get("code"), back.Query().Get("state"))
	// Output: c1 s1
}

// Logout forgets what a login stored for one server: its token file and
// DPoP key file. It reports whether there was anything to forget.
func ExampleLogout() {
	dir, err := os.MkdirTemp("", "oauth")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	_ = os.WriteFile(oauth.TokenFile(dir, "docs"), []byte("{}"), 0o600) // as a login leaves it

	fmt.Println(oauth.Logout(dir, "docs"))
	fmt.Println(oauth.Logout(dir, "docs"))
	// Output:
	// true <nil>
	// false <nil>
}

// FollowRedirect is the Authorize of authorization servers that approve
// without a person (test servers, say): it fetches the authorization URL
// and takes the redirect as the answer (Options.NoBrowser uses it).
func ExampleFollowRedirect() {
	as := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		back := r.URL.Query().Get("redirect_uri") + "?code=c1&state=" + r.URL.Query().Get("state")
		http.Redirect(w, r, back, http.StatusFound)
	}))
	defer as.Close()

	authorize := oauth.FollowRedirect(nil)
	authURL := as.URL + "/authorize?" + url.Values{"redirect_uri": {"http://127.0.0.1/callback"}, "state": {"s1"}}.Encode()
	back, err := authorize(context.Background(), "docs", authURL)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(back)
	// Output: http://127.0.0.1/callback?code=c1&state=s1
}
