package oauth

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

// The 2025-03-26 authorization spec had no protected-resource metadata:
// the MCP server's origin was its authorization server, and its metadata
// lived at <origin>/.well-known/oauth-authorization-server. Servers of that
// era often answer there with an issuer that is a path on the same origin
// (<origin>/oauth), which RFC 8414 §3.3 (the issuer must be the URL the
// metadata was derived from) refuses. The Client accepts that one mismatch,
// and only it: during a flow that found no protected-resource metadata at
// all (no resource_metadata in the challenge, every well-known PRM URL
// answered 4xx), for metadata fetched from the MCP server's own origin
// root, when the issuer has that same origin (scheme, host, port). The
// metadata is then used as the origin's (the issuer the SDK checks and the
// one an authorization response's iss is compared with), and a warning
// names the mismatch. Every other mismatch (a cross-origin issuer, any
// mismatch once PRM was found) is refused as before.

// legacyFlow is what one authorization flow learnt about discovery.
type legacyFlow struct {
	active   bool
	prmFound bool   // a challenge named PRM, or a PRM URL answered non-4xx
	alias    string // the accepted same-origin issuer, if any
}

// beginFlow starts tracking discovery for a flow answering resp.
func (a *serverAuth) beginFlow(resp *http.Response) {
	cs, _ := oauthex.ParseWWWAuthenticate(resp.Header.Values("WWW-Authenticate"))
	named := false
	for _, c := range cs {
		if c.Params["resource_metadata"] != "" {
			named = true
		}
	}
	a.mu.Lock()
	a.legacy = legacyFlow{active: true, prmFound: named}
	a.mu.Unlock()
}

func (a *serverAuth) endFlow() {
	a.mu.Lock()
	a.legacy = legacyFlow{}
	a.mu.Unlock()
}

// legacyIss maps an authorization response's iss: the accepted alias
// stands for the origin it was accepted as.
func (a *serverAuth) legacyIss(iss string) string {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.legacy.alias != "" && iss == a.legacy.alias {
		return originOf(a.resource)
	}
	return iss
}

// originOf returns scheme://host[:port] of raw, or "" if it has none.
func originOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return ""
	}
	return strings.ToLower(u.Scheme) + "://" + strings.ToLower(u.Host)
}

// legacyIssuerTransport watches OAuth's own requests for the legacy case
// above.
type legacyIssuerTransport struct {
	a    *serverAuth
	base http.RoundTripper
}

func (t *legacyIssuerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(req)
	if err != nil || req.Method != http.MethodGet {
		return resp, err
	}
	switch {
	case strings.HasPrefix(req.URL.Path, "/.well-known/oauth-protected-resource"):
		if resp.StatusCode < 400 || resp.StatusCode > 499 {
			t.a.mu.Lock()
			t.a.legacy.prmFound = true
			t.a.mu.Unlock()
		}
	case req.URL.Path == "/.well-known/oauth-authorization-server" && resp.StatusCode == http.StatusOK:
		return t.a.legacyMetadata(req.URL, resp)
	}
	return resp, nil
}

// legacyMetadata returns resp, with its issuer replaced by the MCP
// server's origin when the legacy rule accepts it.
func (a *serverAuth) legacyMetadata(u *url.URL, resp *http.Response) (*http.Response, error) {
	origin := originOf(a.resource)
	a.mu.Lock()
	applies := a.legacy.active && !a.legacy.prmFound && origin != "" && originOf(u.String()) == origin && u.RawQuery == ""
	a.mu.Unlock()
	if !applies {
		return resp, nil
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20+1))
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	out, issuer, ok := legacyIssuerRewrite(body, origin)
	if !ok {
		return resp, nil // matching, or what the SDK reports or refuses
	}
	a.log.Warn("accepting, for OAuth, a 2025-03-26 server's authorization server metadata whose issuer differs from its origin",
		"server", a.name, "issuer", issuer, "metadata", u.String())
	a.mu.Lock()
	a.legacy.alias = issuer
	a.mu.Unlock()
	resp.Body = io.NopCloser(bytes.NewReader(out))
	resp.ContentLength = int64(len(out))
	resp.Header = resp.Header.Clone()
	resp.Header.Set("Content-Length", strconv.Itoa(len(out)))
	return resp, nil
}

// legacyIssuerRewrite returns the metadata body with its issuer replaced
// by origin, and the issuer it replaced, when that issuer is a different
// URL of the same origin (scheme, host, port) with no query, fragment or
// user info. ok is false for anything else: unparsable metadata, a
// matching issuer, or a mismatch that must be refused.
func legacyIssuerRewrite(body []byte, origin string) (out []byte, issuer string, ok bool) {
	var m map[string]json.RawMessage
	if origin == "" || json.Unmarshal(body, &m) != nil || json.Unmarshal(m["issuer"], &issuer) != nil {
		return nil, "", false
	}
	for k := range m {
		if k != "issuer" && strings.EqualFold(k, "issuer") {
			return nil, "", false // decoders that fold case could read another issuer
		}
	}
	iu, err := url.Parse(issuer)
	if err != nil || strings.TrimSuffix(issuer, "/") == origin || originOf(issuer) != origin ||
		iu.RawQuery != "" || iu.Fragment != "" || iu.ForceQuery || iu.User != nil || iu.Opaque != "" {
		return nil, "", false
	}
	m["issuer"], _ = json.Marshal(origin)
	out, err = json.Marshal(m)
	if err != nil {
		return nil, "", false
	}
	return out, issuer, true
}
