package gateway

// RelayIdleWorkers returns how many of the relay's workers wait for a
// host call.
func RelayIdleWorkers(g *Gateway) int { return g.relay.idleWorkers() }

// MaxIdleWorkers is how many workers the relay keeps waiting at most.
const MaxIdleWorkers = maxIdleWorkers
