package host

import (
	"reflect"
	"slices"
	"sort"
	"sync"

	"github.com/switchboard-mcp/switchboard/config"
)

// ApplyResult says what Apply changed.
type ApplyResult struct {
	Added     []string // started (or settled) for the first time
	Removed   []string // stopped and forgotten
	Restarted []string // definition changed: old runtime stopped, new one started
	// Regated lists unchanged servers that were held by the gate (launch
	// trust, a profile) and were asked again: an approval may have been
	// granted meanwhile, a profile may include them now.
	Regated []string
}

// Changed reports whether Apply touched any server.
func (r ApplyResult) Changed() bool {
	return len(r.Added)+len(r.Removed)+len(r.Restarted) > 0
}

// Apply switches the Host to a new resolved configuration (live reload;
// docs/gateway.md, Live reload) by diffing it with the one in force: a server whose resolved
// definition is unchanged keeps running untouched (its sessions and caches
// survive); a changed one is stopped and started again; a new one is
// started; a removed one is stopped. A paused server stays paused across a
// change. A server whose confinement changed (SetConfinement) restarts
// too, and one that runs but that the gate now disables (a profile that
// no longer includes it) is stopped and shown disabled, as if restarted. Servers held by the gate (Options.Gate: launch trust, a profile)
// are asked again, so an approval granted meanwhile, or a profile that
// now includes them, takes effect. Apply waits for stopped servers to be
// reaped; new ones connect in the background as with New. After Close it
// does nothing and returns an empty ApplyResult (see Closed).
func (h *Host) Apply(cfg *config.Resolved) ApplyResult {
	var res ApplyResult
	if cfg == nil {
		cfg = &config.Resolved{}
	}
	// The gate disables outright (a profile that no longer includes the
	// server) what it would not start now: such a server stops, as it
	// would not have started. Asked before the lock: a gate is the
	// embedder's code. A withdrawn approval (needs-approval) stops
	// nothing that runs.
	disabled := map[string]bool{}
	for i := range cfg.Servers {
		if st, _ := h.opts.Gate(&cfg.Servers[i]); st == StateDisabled {
			disabled[cfg.Servers[i].Name] = true
		}
	}
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return res
	}
	old := h.servers
	next := make(map[string]*server, len(cfg.Servers))
	var stop, start, regate []*server
	// A server whose name conflict came or went is restarted like a changed
	// one, so the outcome is that of a fresh start (see nameConflict).
	wasRefused, refused := h.conflicts, nameConflicts(cfg)
	for _, rs := range cfg.Servers {
		if _, dup := next[rs.Name]; dup {
			continue // config never yields duplicates; be safe
		}
		o, existed := old[rs.Name]
		if existed && sameDefinition(o.cfg, rs) && wasRefused[rs.Name] == refused[rs.Name] && !o.confine.affects(h.confine, &rs) &&
			!(disabled[rs.Name] && o.passedGate()) {
			next[rs.Name] = o
			if st := o.publicState(); st == StateNeedsApproval || st == StateApprovalStale || o.heldByGate() {
				regate = append(regate, o)
				res.Regated = append(res.Regated, rs.Name)
			}
			continue
		}
		// A server the file gained since New has secrets the set lacks.
		h.secrets.Add(serverSecrets(rs)...)
		ns := newServer(h, rs)
		if existed {
			ns.paused = o.isPaused()
			stop = append(stop, o)
			res.Restarted = append(res.Restarted, rs.Name)
		} else {
			res.Added = append(res.Added, rs.Name)
		}
		next[rs.Name] = ns
		start = append(start, ns)
	}
	for name, o := range old {
		if _, kept := next[name]; !kept {
			stop = append(stop, o)
			res.Removed = append(res.Removed, name)
		}
	}
	order := make([]string, 0, len(next))
	for name := range next {
		order = append(order, name)
	}
	sort.Strings(order)
	refilter := filtersChanged(h.cfg, cfg)
	h.servers, h.order, h.cfg, h.conflicts = next, order, cfg, refused
	if h.router != nil {
		for _, s := range stop {
			h.router.RemoveServer(s.name)
		}
	}
	h.mu.Unlock()

	var wg sync.WaitGroup
	for _, s := range stop {
		wg.Add(1)
		go func() { defer wg.Done(); s.stop() }()
	}
	wg.Wait()
	for _, s := range start {
		if s.isPaused() {
			s.settle(StatePaused, "paused for this session")
			continue
		}
		s.start()
	}
	for _, s := range regate {
		s.start()
	}
	// A changed tool filter needs no restart: the lists are filtered when
	// read, and clients are told to read them again.
	for _, name := range refilter {
		if !slices.Contains(res.Restarted, name) {
			h.log.Info("tool filter changed", "server", name)
			h.emit(Event{Kind: EventToolsChanged, Server: name})
		}
	}
	for _, list := range [][]string{res.Added, res.Removed, res.Restarted, res.Regated} {
		sort.Strings(list)
	}
	if res.Changed() {
		h.log.Info("configuration applied", "added", res.Added, "removed", res.Removed, "restarted", res.Restarted)
		for _, name := range append(append(append([]string{}, res.Added...), res.Removed...), res.Restarted...) {
			h.emit(Event{Kind: EventToolsChanged, Server: name})
		}
	}
	return res
}

// sameDefinition reports whether two resolutions of a server would run the
// same thing in the same way. Positions, shadows and diagnostics do not count.
func sameDefinition(a, b config.ResolvedServer) bool {
	return reflect.DeepEqual(a.Written, b.Written) &&
		reflect.DeepEqual(a.Effective, b.Effective) &&
		a.Scope == b.Scope && a.Trust == b.Trust && a.File == b.File &&
		a.Availability == b.Availability && a.DisabledReason == b.DisabledReason &&
		reflect.DeepEqual(a.MissingEnv, b.MissingEnv)
}

// passedGate reports whether the server's last start got past
// Options.Gate: it runs, or tries to (not paused, not settled before the
// gate by its configuration).
func (s *server) passedGate() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.gatePassed && !s.paused
}

// heldByGate reports whether Options.Gate refused the server's last start.
func (s *server) heldByGate() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.gateHeld && !s.paused
}

func (s *server) isPaused() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.paused
}
