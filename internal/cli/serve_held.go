package cli

import (
	"context"
	"fmt"
	"io"
	"sync"

	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/termsafe"
)

// sayHeld writes on w, once each time a project server becomes held
// (needs-approval, approval-stale), that the gateway holds it and how to
// approve it, and once that a server is not served because its URL is the
// gateway's own endpoint (host.SelfEndpointReason). A gateway asks nobody
// on a terminal, and its clients only find the server's tools missing:
// stderr is where a person looks (VS Code's output panel, the Inspector,
// the terminal running serve --http). It follows s until ctx is done.
func sayHeld(ctx context.Context, s *session, w io.Writer) {
	var mu sync.Mutex
	said := map[string]host.State{}
	say := func(name string, st host.State, reason string) {
		mu.Lock()
		defer mu.Unlock()
		if st == host.StateDisabled && reason == host.SelfEndpointReason {
			if said[name] != st {
				said[name] = st
				fmt.Fprintf(w, "switchboard: server %s is this gateway's own endpoint, so it does not serve it (a gateway never serves itself); remove it from the servers the gateway reads (`switchboard mcp remove %s`) unless another Switchboard uses it\n",
					termsafe.Line(name), termsafe.Line(name))
			}
			return
		}
		if st != host.StateNeedsApproval && st != host.StateApprovalStale {
			delete(said, name)
			return
		}
		if said[name] == st {
			return
		}
		said[name] = st
		why := "needs your approval before it starts"
		if st == host.StateApprovalStale {
			why = "changed since you approved it"
		}
		fmt.Fprintf(w, "switchboard: project server %s %s; its tools are held until you run `switchboard mcp approve %s` (or approve it in `switchboard ui`)\n",
			termsafe.Line(name), why, termsafe.Line(name))
	}
	s.sb.Subscribe(ctx, func(ev host.Event) {
		if ev.Kind == host.EventState {
			say(ev.Server, ev.State, ev.Reason)
		}
	})
	for _, st := range s.h.Status() {
		say(st.Name, st.State, st.Reason)
	}
}
