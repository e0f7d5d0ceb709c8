package gateway

// RelayInline returns how many of the running host calls run on their
// request's own goroutine (callInline), not held.
func RelayInline(g *Gateway) int { return g.relay.inlineCalls() }
