// Package testoauth runs a real loopback MCP server (the echo test server
// over Streamable HTTP and SSE) behind OAuth bearer tokens, with its own
// small authorization server: protected-resource and authorization-server
// metadata, dynamic client registration, an authorize endpoint that
// approves at once (so a client can follow its redirect without a
// browser), PKCE-checked code exchange and refresh, and, when DPoP is set,
// DPoP-bound tokens (RFC 9449) with every proof checked. Tests of the
// host's and the CLI's OAuth use it.
package testoauth

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/testserver"
)

// Server is one running OAuth-protected MCP server. Set Resource and
// ExpiresIn before the first client connects. Its methods are safe for
// concurrent use.
type Server struct {
	// URL is the Streamable HTTP endpoint (/mcp), SSEURL the HTTP+SSE one
	// (/sse); the authorization server is at their origin.
	URL, SSEURL, base string
	// Resource, if set, is what the protected-resource metadata claims.
	Resource string
	// ExpiresIn is the tokens' lifetime in seconds (0: 3600).
	ExpiresIn int
	// Issuer, if set, is the issuer the authorization server metadata
	// claims (by default the origin it is served from).
	Issuer string
	// NoPRM makes a 2025-03-26-era server: no protected-resource metadata
	// (404) and no resource_metadata in the challenge.
	NoPRM bool
	// DPoP makes the server enforce DPoP (see dpop.go): tokens are bound
	// to the key of the token request's proof, and used only with proofs
	// by that key.
	DPoP bool
	// RotateRefresh makes a refresh token good for one refresh, as OAuth
	// 2.1 asks of public clients: a client that lost the new one cannot
	// refresh again.
	RotateRefresh bool
	// RefuseTokens makes the MCP endpoints answer 401 to every token, as
	// a server that wants another audience or scope than it was given
	// (with a DPoP challenge when DPoP is set).
	RefuseTokens bool

	mu         sync.Mutex
	deny       bool
	codes      map[string]string // code → PKCE challenge
	tokens     map[string]bool   // valid access tokens
	refresh    map[string]bool   // valid refresh tokens
	n          int
	authorizes int
	refreshes  int
	tokenReqs  int
	seen       []string          // Authorization headers the MCP endpoint saw
	resources  []string          // resource parameters of authorization and token requests
	bound      map[string]string // DPoP: token (access or refresh) → jkt of its key
	family     map[string]int    // code or token → the authorization it descends from
	jtis       map[string]bool   // DPoP proof jtis seen
	keysSeen   map[string]bool   // DPoP: jkts of accepted proofs
	refusals   []string          // DPoP: why requests were refused
}

// Start starts a server and closes it when the test ends.
func Start(t testing.TB) *Server {
	t.Helper()
	o := &Server{codes: map[string]string{}, tokens: map[string]bool{}, refresh: map[string]bool{},
		bound: map[string]string{}, family: map[string]int{}, jtis: map[string]bool{}, keysSeen: map[string]bool{}}
	mcpSrv := testserver.NewServer("echo")
	streamable := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return mcpSrv }, nil)
	sse := mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return mcpSrv }, nil)
	mux := http.NewServeMux()
	ts := httptest.NewServer(mux)
	t.Cleanup(ts.Close)
	o.base, o.URL, o.SSEURL = ts.URL, ts.URL+"/mcp", ts.URL+"/sse"
	verify := func(_ context.Context, tok string, _ *http.Request) (*auth.TokenInfo, error) {
		o.mu.Lock()
		defer o.mu.Unlock()
		if !o.tokens[tok] || o.RefuseTokens {
			return nil, auth.ErrInvalidToken
		}
		return &auth.TokenInfo{Expiration: time.Now().Add(time.Hour)}, nil
	}
	protect := func(path string, h http.Handler) {
		guarded := auth.RequireBearerToken(verify, &auth.RequireBearerTokenOptions{ResourceMetadataURL: ts.URL + "/.well-known/oauth-protected-resource" + path})(h)
		legacy := auth.RequireBearerToken(verify, nil)(h)
		mux.Handle(path, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			o.mu.Lock()
			o.seen = append(o.seen, r.Header.Get("Authorization"))
			if o.DPoP {
				why := o.checkDPoPAccess(r)
				if why != "" {
					o.refusals = append(o.refusals, path+": "+why)
				}
				o.mu.Unlock()
				if why != "" {
					refuseDPoP(w, ts.URL+"/.well-known/oauth-protected-resource"+path, why)
					return
				}
				h.ServeHTTP(w, r)
				return
			}
			o.mu.Unlock()
			if o.NoPRM {
				legacy.ServeHTTP(w, r)
				return
			}
			guarded.ServeHTTP(w, r)
		}))
	}
	protect("/mcp", streamable)
	protect("/sse", sse)
	for _, path := range []string{"/mcp", "/sse"} {
		mux.HandleFunc("/.well-known/oauth-protected-resource"+path, func(w http.ResponseWriter, r *http.Request) {
			if o.NoPRM {
				http.NotFound(w, r)
				return
			}
			res := ts.URL + path
			if o.Resource != "" {
				res = o.Resource
			}
			writeJSON(w, 200, map[string]any{"resource": res, "authorization_servers": []string{ts.URL}})
		})
	}
	mux.HandleFunc("/.well-known/oauth-authorization-server", func(w http.ResponseWriter, r *http.Request) {
		issuer := ts.URL
		if o.Issuer != "" {
			issuer = o.Issuer
		}
		md := map[string]any{
			"issuer": issuer, "authorization_endpoint": ts.URL + "/authorize", "token_endpoint": ts.URL + "/token",
			"registration_endpoint": ts.URL + "/register", "code_challenge_methods_supported": []string{"S256"},
			"response_types_supported": []string{"code"}, "token_endpoint_auth_methods_supported": []string{"none"},
			"grant_types_supported": []string{"authorization_code", "refresh_token"},
		}
		if o.DPoP {
			md["dpop_signing_alg_values_supported"] = []string{"ES256"}
		}
		writeJSON(w, 200, md)
	})
	mux.HandleFunc("/register", func(w http.ResponseWriter, r *http.Request) {
		var md map[string]any
		_ = json.NewDecoder(r.Body).Decode(&md)
		md["client_id"] = "client-1"
		writeJSON(w, 201, md)
	})
	mux.HandleFunc("/authorize", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		if q.Get("code_challenge_method") != "S256" || q.Get("resource") == "" {
			http.Error(w, "PKCE S256 and resource are required", 400)
			return
		}
		o.mu.Lock()
		if o.deny {
			o.mu.Unlock()
			back, _ := url.Parse(q.Get("redirect_uri"))
			back.RawQuery = url.Values{"error": {"access_denied"}, "state": {q.Get("state")}}.Encode()
			http.Redirect(w, r, back.String(), http.StatusFound)
			return
		}
		o.resources = append(o.resources, q.Get("resource"))
		o.authorizes++
		o.n++
		code := fmt.Sprintf("code-%d", o.n)
		o.codes[code] = q.Get("code_challenge")
		o.family[code] = o.authorizes
		o.mu.Unlock()
		back, _ := url.Parse(q.Get("redirect_uri"))
		bq := back.Query()
		bq.Set("code", code)
		bq.Set("state", q.Get("state"))
		back.RawQuery = bq.Encode()
		http.Redirect(w, r, back.String(), http.StatusFound)
	})
	mux.HandleFunc("/token", func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		o.mu.Lock()
		defer o.mu.Unlock()
		o.tokenReqs++
		o.resources = append(o.resources, r.PostForm.Get("resource"))
		var jkt string
		if o.DPoP {
			var err error
			if jkt, err = o.verifyProof(r, ""); err != nil {
				o.refusals = append(o.refusals, "/token: "+err.Error())
				writeJSON(w, 400, map[string]any{"error": "invalid_dpop_proof", "error_description": err.Error()})
				return
			}
			if rt := r.PostForm.Get("refresh_token"); r.PostForm.Get("grant_type") == "refresh_token" && o.refresh[rt] && o.bound[rt] != jkt {
				o.refusals = append(o.refusals, "/token: refresh proof key is not the key the refresh token is bound to")
				writeJSON(w, 400, map[string]any{"error": "invalid_grant", "error_description": "DPoP proof key does not match the refresh token"})
				return
			}
		}
		var fam int
		switch r.PostForm.Get("grant_type") {
		case "authorization_code":
			challenge, ok := o.codes[r.PostForm.Get("code")]
			sum := sha256.Sum256([]byte(r.PostForm.Get("code_verifier")))
			if !ok || base64.RawURLEncoding.EncodeToString(sum[:]) != challenge {
				writeJSON(w, 400, map[string]any{"error": "invalid_grant"})
				return
			}
			delete(o.codes, r.PostForm.Get("code"))
			fam = o.family[r.PostForm.Get("code")]
		case "refresh_token":
			old := r.PostForm.Get("refresh_token")
			if !o.refresh[old] {
				writeJSON(w, 400, map[string]any{"error": "invalid_grant"})
				return
			}
			if o.RotateRefresh {
				delete(o.refresh, old)
			}
			fam = o.family[old]
			o.refreshes++
		default:
			writeJSON(w, 400, map[string]any{"error": "unsupported_grant_type"})
			return
		}
		o.n++
		at, rt := fmt.Sprintf("at-%d", o.n), fmt.Sprintf("rt-%d", o.n)
		o.tokens[at], o.refresh[rt] = true, true
		o.family[at], o.family[rt] = fam, fam
		exp := o.ExpiresIn
		if exp == 0 {
			exp = 3600
		}
		typ := "Bearer"
		if o.DPoP {
			typ = "DPoP"
			o.bound[at], o.bound[rt] = jkt, jkt
			o.keysSeen[jkt] = true
		}
		writeJSON(w, 200, map[string]any{"access_token": at, "token_type": typ, "refresh_token": rt, "expires_in": exp})
	})
	return o
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// Counts reports the authorizations, refresh grants and token requests so far.
func (o *Server) Counts() (authorizes, refreshes, tokenReqs int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.authorizes, o.refreshes, o.tokenReqs
}

// Deny makes the authorize endpoint refuse (error=access_denied) or
// approve again.
func (o *Server) Deny(deny bool) {
	o.mu.Lock()
	o.deny = deny
	o.mu.Unlock()
}

// Revoke invalidates every token issued so far, access and refresh.
func (o *Server) Revoke() {
	o.mu.Lock()
	o.tokens, o.refresh = map[string]bool{}, map[string]bool{}
	o.mu.Unlock()
}

// Seen returns the Authorization headers the MCP endpoints received.
func (o *Server) Seen() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]string(nil), o.seen...)
}

// Family returns the authorization (1 for the first, as Counts counts
// them) that token, an access or refresh token or an Authorization
// header's "Bearer <token>", was issued by or refreshed from; 0 for a
// token this server did not issue.
func (o *Server) Family(token string) int {
	o.mu.Lock()
	defer o.mu.Unlock()
	if t, ok := strings.CutPrefix(token, "Bearer "); ok {
		token = t
	}
	return o.family[token]
}

// Resources returns the resource parameters of the authorization and
// token requests so far.
func (o *Server) Resources() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]string(nil), o.resources...)
}
