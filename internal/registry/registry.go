// Package registry reads the MCP Registry (registry.modelcontextprotocol.io,
// and the private sub-registries that implement the same API) and turns a
// server's server.json into a Switchboard server definition.
//
// The pieces: [Client] speaks the registry's read API, version v0.1
// (GET /v0.1/servers?search= and GET /v0.1/servers/{name}/versions/{v});
// the types mirror the server.json format (schema 2025-12-11); [Translate]
// is the pure step from one package or remote of a server.json, plus the
// values a user gave for its inputs, to a definition, and [Inputs] lists
// what it will ask for. Nothing here writes files or prompts: that is the
// CLI's job.
package registry

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// DefaultURL is the official registry.
const DefaultURL = "https://registry.modelcontextprotocol.io"

// APIVersion is the path prefix of the registry API this package speaks.
const APIVersion = "v0.1"

// ErrNotFound is returned (wrapped) when the registry has no such server
// or version.
var ErrNotFound = errors.New("not found in the registry")

// maxBody bounds what is read of one response: a page of 100 servers is a
// few hundred kilobytes.
const maxBody = 16 << 20

// Client reads one registry. A Client is safe for concurrent use.
type Client struct {
	base *url.URL
	http *http.Client
	ua   string
}

// Options configure a Client; a nil *Options means all defaults.
type Options struct {
	// HTTPClient makes the requests. If nil, a client with a 30 s timeout
	// is used; callers that must check where it connects (netguard) pass
	// their own.
	HTTPClient *http.Client
	// UserAgent is sent with every request. If empty, "switchboard".
	UserAgent string
}

// New returns a client for the registry at baseURL (scheme, host and an
// optional path prefix, e.g. https://registry.example.com/mirror). If
// baseURL is empty, DefaultURL is used.
func New(baseURL string, opts *Options) (*Client, error) {
	if baseURL == "" {
		baseURL = DefaultURL
	}
	u, err := url.Parse(baseURL)
	if err != nil {
		return nil, fmt.Errorf("registry URL %q: %w", baseURL, err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("registry URL %q: want an http or https URL with a host", baseURL)
	}
	if u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("registry URL %q: want no user, query or fragment", baseURL)
	}
	u.Path = strings.TrimRight(u.Path, "/")
	u.RawPath = ""
	if opts == nil {
		opts = &Options{}
	}
	c := &Client{base: u, http: opts.HTTPClient, ua: opts.UserAgent}
	if c.http == nil {
		c.http = &http.Client{Timeout: 30 * time.Second}
	}
	if c.ua == "" {
		c.ua = "switchboard"
	}
	return c, nil
}

// URL is the registry's base URL as the client uses it.
func (c *Client) URL() string { return c.base.String() }

// SearchOptions narrow a search; a nil *SearchOptions means all defaults.
type SearchOptions struct {
	// Limit is the page size. If <= 0, 30 (the registry's default); the
	// registry allows at most 100.
	Limit int
	// Cursor continues from a previous page's Metadata.NextCursor.
	Cursor string
	// AllVersions lists every version of each server; by default only the
	// latest one (version=latest).
	AllVersions bool
}

// Search lists the servers whose name contains text (the registry
// matches names by substring and wants at least 3 characters; an empty
// text lists everything).
func (c *Client) Search(ctx context.Context, text string, opts *SearchOptions) (*ServerList, error) {
	if opts == nil {
		opts = &SearchOptions{}
	}
	q := url.Values{}
	if t := strings.TrimSpace(text); t != "" {
		q.Set("search", t)
	}
	if !opts.AllVersions {
		q.Set("version", "latest")
	}
	if opts.Limit > 0 {
		q.Set("limit", strconv.Itoa(opts.Limit))
	}
	if opts.Cursor != "" {
		q.Set("cursor", opts.Cursor)
	}
	var list ServerList
	if err := c.get(ctx, "/servers", q, &list); err != nil {
		return nil, err
	}
	return &list, nil
}

// Get returns one version of a server; version "" or "latest" means the
// latest one.
func (c *Client) Get(ctx context.Context, name, version string) (*ServerResponse, error) {
	if version == "" {
		version = "latest"
	}
	var r ServerResponse
	p := "/servers/" + url.PathEscape(name) + "/versions/" + url.PathEscape(version)
	if err := c.get(ctx, p, nil, &r); err != nil {
		if errors.Is(err, ErrNotFound) {
			return nil, fmt.Errorf("server %s version %s: %w", name, version, ErrNotFound)
		}
		return nil, err
	}
	return &r, nil
}

// Error is a registry's answer other than 200 (but 404, which is
// ErrNotFound).
type Error struct {
	Status int
	// Detail is the registry's own message (its problem+json "detail"),
	// or the start of the body.
	Detail string
}

func (e *Error) Error() string {
	if e.Detail == "" {
		return fmt.Sprintf("registry answered %d %s", e.Status, http.StatusText(e.Status))
	}
	return fmt.Sprintf("registry answered %d %s: %s", e.Status, http.StatusText(e.Status), e.Detail)
}

func (c *Client) get(ctx context.Context, path string, q url.Values, v any) error {
	u := *c.base
	// The server name holds a "/" that must stay escaped: set both forms.
	rawPath := c.base.EscapedPath() + "/" + APIVersion + path
	if p, err := url.PathUnescape(rawPath); err == nil {
		u.Path, u.RawPath = p, rawPath
	}
	u.RawQuery = q.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", c.ua)
	resp, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("asking the registry at %s: %w", c.base.Redacted(), err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxBody+1))
	if err != nil {
		return fmt.Errorf("reading the registry's answer: %w", err)
	}
	if len(body) > maxBody {
		return fmt.Errorf("the registry's answer is larger than %d bytes", maxBody)
	}
	switch {
	case resp.StatusCode == http.StatusNotFound:
		return ErrNotFound
	case resp.StatusCode != http.StatusOK:
		return &Error{Status: resp.StatusCode, Detail: problemDetail(body)}
	}
	if err := json.Unmarshal(body, v); err != nil {
		return fmt.Errorf("the registry at %s answered %s with something other than its API's JSON: %w", c.base.Redacted(), path, err)
	}
	return nil
}

// problemDetail is the message of an RFC 9457 problem body, else the start
// of the body.
func problemDetail(body []byte) string {
	var p struct {
		Title  string `json:"title"`
		Detail string `json:"detail"`
	}
	s := strings.TrimSpace(string(body))
	if json.Unmarshal(body, &p) == nil && (p.Detail != "" || p.Title != "") {
		s = p.Detail
		if s == "" {
			s = p.Title
		}
	}
	// A message, not a body: a registry may send megabytes.
	if utf8.RuneCountInString(s) > 200 {
		n := 0
		for i := range s {
			if n == 200 {
				s = s[:i] + "…"
				break
			}
			n++
		}
	}
	return s
}
