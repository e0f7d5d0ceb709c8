package host_test

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/switchboard-mcp/switchboard/internal/testserver"
	"github.com/switchboard-mcp/switchboard/toolsurface"
)

// A resource listing is what a model reads about a resource (a gateway's
// client lists them to its model; an agent reads `resources --json`): its
// name, title and description are cleaned of deceptive characters, capped
// and rid of the secret values Switchboard gave servers, as a tool's are.
// Its URI and its contents stay byte for byte. Before, listings reached
// the model as the server wrote them.
func TestResourceListingsCleaned(t *testing.T) {
	const token = "tok_live_1a2b3c4d5e6f7a8b9c0d"
	peer := stdio("peer", "hostile-peer", "-leak", "PEER_API_TOKEN", "-fat", "100000")
	peer.Effective.Env = map[string]string{"PEER_API_TOKEN": token}
	peer.Written.Env = peer.Effective.Env
	h := newHost(t, cfgOf(peer, stdio("out", "hostile-output")), nil)
	ctx := ctxFor(t, 20*time.Second)
	resources, _, err := h.Resources(ctx)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, r := range resources {
		res := r.Resource
		seen[res.URI] = true
		for _, s := range []string{res.Name, res.Title, res.Description} {
			if c, f := toolsurface.CleanText(s); c != s || f != nil {
				t.Errorf("%s: deceptive text in its listing: %q", res.URI, s)
			}
			if strings.Contains(s, token) {
				t.Errorf("%s: the secret in its listing: %q", res.URI, s)
			}
			if n := utf8.RuneCountInString(s); n > toolsurface.DefaultDescriptionCap {
				t.Errorf("%s: %d characters in its listing", res.URI, n)
			}
		}
		switch res.URI {
		case "leak://readme":
			if res.Description != "description <redacted>" || res.Name != "name <redacted>" {
				t.Errorf("leak://readme listed as %+v", res)
			}
		case testserver.HostileResourceURI:
			if !strings.Contains(res.Title, "[U+202E]") {
				t.Errorf("the bidi override of hostile-output's title is not made visible: %q", res.Title)
			}
		case "fat://readme":
			if !strings.HasSuffix(res.Description, toolsurface.Ellipsis) || !strings.HasSuffix(res.Name, toolsurface.Ellipsis) {
				t.Errorf("fat://readme's listing is not cut: %d, %d characters", len(res.Name), len(res.Description))
			}
		}
	}
	for _, uri := range []string{"leak://readme", testserver.HostileResourceURI, "fat://readme"} {
		if !seen[uri] {
			t.Errorf("%s not listed", uri)
		}
	}
	// Contents are data: read byte for byte.
	rr, err := h.ReadResource(ctx, "out", testserver.HostileResourceURI)
	if err != nil {
		t.Fatal(err)
	}
	if len(rr.Contents) == 0 || !strings.Contains(rr.Contents[0].Text, testserver.HostileText) {
		t.Errorf("the resource's contents were changed: %+v", rr.Contents)
	}
}
