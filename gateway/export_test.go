package gateway

// RelayCounts returns how many calls are held for a client's answer and
// how many host calls run on the relay's goroutines.
func RelayCounts(g *Gateway) (held, running int) { return g.relay.counts() }

// FoundRenamer is what toolSearch does to a result's text, for servedOf
// (host name → served name); building it is what a tool sync does.
func FoundRenamer(servedOf map[string]string) func(string) string {
	r := foundNamesReplacer(servedOf)
	return func(text string) string {
		if r == nil {
			return text
		}
		return r.Replace(text)
	}
}

// FastCalls returns how many calls the HTTP fast path answered.
func FastCalls(g *Gateway) int64 { return g.fastCalls.Load() }

// HandedOver counts the fast calls handed over to the SDK at a question.
func HandedOver(g *Gateway) int64 { return g.handedOver.Load() }

// CallsInFlight returns how many tool calls the gateway is running.
func CallsInFlight(g *Gateway) int {
	g.calls.mu.Lock()
	defer g.calls.mu.Unlock()
	return len(g.calls.set)
}

// OpenStreams returns how many standalone streams the gateway serves on
// connections of their own.
func OpenStreams(g *Gateway) int {
	g.streams.mu.Lock()
	defer g.streams.mu.Unlock()
	return len(g.streams.set)
}

// StreamsOnOwnConnections says whether this platform serves standalone
// streams on connections of their own (it can peek at a socket).
const StreamsOnOwnConnections = canPeek

// The bounds of the calls held for a client's answer: in all, and of one
// client.
const (
	MaxHeldQuestions = maxHeldQuestions
	MaxHeldPerClient = maxHeldPerClient
)

// StreamWriting reports whether a write to the client of session sid's
// hijacked stream is under way.
func StreamWriting(g *Gateway, sid string) bool {
	g.streams.mu.Lock()
	defer g.streams.mu.Unlock()
	for s := range g.streams.set {
		if s.sid == sid && s.writing.Load() {
			return true
		}
	}
	return false
}
