package host

// OAuthOptions configure OAuth 2.1 for Streamable HTTP and SSE servers (SPEC §4).
type OAuthOptions struct{}
