package host

import (
	"context"
	"net/http"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/toolsurface"
)

// An Authorizer authorizes the requests of remote (Streamable HTTP and
// SSE) servers: it wraps a server's transport so requests carry its
// credentials, and can answer a refusal (a login, a refresh) and retry.
// Package oauth's *Client is one: OAuth 2.1 with stored, refreshed and
// DPoP-bound tokens. Set it as Options.Authorizer.
//
// It is an http.RoundTripper wrapper rather than the SDK's
// auth.OAuthHandler because the SDK calls that handler from the
// Streamable HTTP transport only (SSE servers need OAuth too), sends
// every token as a Bearer token (a DPoP-bound token must be sent with a
// proof) and retries a refused request once, on POSTs only.
type Authorizer interface {
	// Transport returns next with the requests of server (its name, and
	// the URL the definition gives) authorized. outbound is for the
	// Authorizer's own requests on the server's behalf (metadata, tokens):
	// it is held to the server's outbound address policy and carries none
	// of its headers. ctx lasts as long as the Host: it bounds work done
	// outside a request, such as token refreshes.
	//
	// The Host calls it at every connect, from any goroutine; an
	// Authorizer that keeps state per server (tokens) reuses it. Errors of
	// the returned transport become the server's status Reason (see
	// Options.ErrorHint) or the call's error.
	Transport(ctx context.Context, server, url string, outbound, next http.RoundTripper) http.RoundTripper
}

// SecretSharer is implemented by an Authorizer that holds credentials of
// its own (package oauth's Client: access and refresh tokens): the Host
// hands it the function that adds values to the secrets it scrubs from
// logs, errors and results, and the Authorizer calls it with every
// credential it holds now and learns later.
type SecretSharer interface {
	ShareSecrets(add func(values ...string))
}

// withAuth wraps a remote server's transport with the Authorizer. A
// server whose definition sets its own Authorization header is left
// alone: the user chose static credentials.
func (s *server) withAuth(def config.Server, outbound, rt http.RoundTripper) http.RoundTripper {
	a := s.h.opts.Authorizer
	if a == nil {
		return rt
	}
	for k := range def.Headers {
		if http.CanonicalHeaderKey(k) == "Authorization" {
			return rt
		}
	}
	return a.Transport(s.h.ctx, s.name, def.URL, outbound, rt)
}

// maxErrorReason bounds, in characters, the error text of a status Reason:
// an error may quote what a server sent (net/http quotes a malformed
// header line whole), and a server could send megabytes.
const maxErrorReason = 2000

// errorText is err's text cut to maxErrorReason characters.
func errorText(err error) string {
	return toolsurface.CapDescription(err.Error(), maxErrorReason)
}

// errorReason is the status Reason of an error that leaves the server in
// StateError: its text (cut to maxErrorReason), then the application's
// hint (Options.ErrorHint).
func (s *server) errorReason(err error) string {
	reason := errorText(err)
	if hint := s.h.opts.ErrorHint; hint != nil {
		if more := hint(s.name, err); more != "" {
			reason += "; " + more
		}
	}
	return reason
}
