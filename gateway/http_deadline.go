package gateway

import (
	"net/http"
	"time"
)

// BodyDeadline returns next with every request's body bounded in time: a
// request that carries one must deliver it within timeout (if <= 0,
// DefaultBodyTimeout), whichever handler reads it — or none: the server
// reads what a handler left unread before it answers, and a client that
// trickles its body would hold the connection, and a goroutine, for as long
// as it likes (slowloris). The bound ends once the body is read whole
// (net/http lifts the read deadline when it starts watching the connection
// for a close), so what follows — a long call, an SSE stream — has none. A
// request without a body is left alone. Handler and `serve --http` put it
// in front of everything they serve; the MCP endpoint also bounds its
// bodies itself (HTTPOptions.BodyTimeout, answered 408).
func BodyDeadline(next http.Handler, timeout time.Duration) http.Handler {
	if timeout <= 0 {
		timeout = DefaultBodyTimeout
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body != nil && r.Body != http.NoBody {
			// A ResponseWriter that is not net/http's has no deadline
			// to set: its server bounds its reads, or not.
			_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(timeout))
		}
		next.ServeHTTP(w, r)
	})
}
