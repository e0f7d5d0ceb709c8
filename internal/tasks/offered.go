package tasks

// Plain reports whether the adapter sends a tools/call of tool to the
// server as it is and leaves its answer alone: the server offers no tasks,
// or offers them on 2025-11-25 and listed tool without task support (or
// as "optional" while the adapter does not ask for those). A tool it has
// not seen listed is not plain (its first call lists the tools), nor is
// any tool on 2026-07-28, where the server decides. The host's relay path
// writes plain calls itself.
func (a *Adapter) Plain(tool string) bool {
	switch a.revision() {
	case revNone:
		return true
	case revV1:
		a.mu.Lock()
		s, known := a.support[tool]
		a.mu.Unlock()
		return known && !a.asksTask(s)
	}
	return false
}
