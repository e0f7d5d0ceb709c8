package tasks

// Offered reports whether the server behind the adapter's connection
// offers tasks, as its handshake said: only then may the adapter rewrite
// a tools/call or take its answer (the host's relay path of tools/call
// writes calls of its own where it does not).
func (a *Adapter) Offered() bool { return a.revision() != revNone }
