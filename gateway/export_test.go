package gateway

// RelayCounts returns how many calls are held for a client's answer and
// how many host calls run on the relay's goroutines.
func RelayCounts(g *Gateway) (held, running int) { return g.relay.counts() }
