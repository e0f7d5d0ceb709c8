// Package oauth is the OAuth 2.1 client of remote MCP servers (Streamable
// HTTP and SSE), as the MCP authorization spec describes it: discovery of
// the server's protected-resource and authorization-server metadata,
// client registration (pre-registered, client ID metadata document, or
// dynamic), PKCE, scopes and step-up, refresh, and DPoP-bound tokens
// (RFC 9449). The Go SDK's auth packages do much of the flow.
//
// # Plugging it into a host
//
// A *Client is a host.Authorizer: give it to the host and every remote
// server whose definition sets no Authorization header of its own gets
// its requests authorized.
//
//	c := oauth.New(&oauth.Options{Dir: tokenDir, Logger: logger})
//	h := host.New(cfg, &host.Options{Authorizer: c, Logger: logger})
//
// The package knows nothing of host: host hands it each server's name, URL
// and outbound transport (held to the server's address policy), and it
// returns the transport that server's requests go through.
//
// # Logging in
//
// A Client without Options.Authorize uses and refreshes stored tokens but
// never asks a user: a server that needs a new authorization fails with a
// *LoginRequiredError, and stored tokens whose DPoP key file cannot be
// trusted fail with a *KeyFileError. Errors name no command: the
// application says what to do (host.Options.ErrorHint adds it to the
// server's status; the switchboard CLI names `switchboard mcp login`).
// A server that refuses access and publishes no OAuth metadata at all
// fails with an error wrapping ErrHeaderRequired: it wants an API key or
// token in a header, and no login can help.
//
// To log in, set Options.Authorize (Loopback receives the browser's
// redirect on 127.0.0.1) and Options.Fresh, so a new authorization runs
// even when tokens are stored. Flows without a person are chosen with
// Options.Grant: client credentials (a secret or a private-key JWT),
// a workload identity JWT-bearer assertion, or enterprise-managed
// authorization through an identity provider.
//
// A login can be made on one machine and used on another: ExportLogin
// reads what a login stored (tokens, client registration, token
// endpoint), and ImportLogin stores it where another Client finds, uses
// and refreshes it — a team gateway so calls an upstream with each
// member's own login (`switchboard gateway login`). Logins bound to a
// DPoP key are never handed over.
//
// # The token store
//
// With Options.Dir set, each server's tokens are kept in TokenFile (mode
// 0600, directory 0700) and the DPoP key they are bound to, if any, in
// DPoPKeyFile next to it; Logout removes both. A token is bound to the URL
// it was issued for and never sent elsewhere. A file others may read, or
// that belongs to another user, is not used.
package oauth
