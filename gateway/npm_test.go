package gateway_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/internal/npmtest"
)

// The gateway forwards completion/complete for a prompt to the server
// that offers it (server-everything's completable-prompt), and completes
// an unknown ref to nothing.
func TestCompletionThroughGateway(t *testing.T) {
	p := npmtest.Install(t)
	def := config.Server{Type: config.TypeStdio, Command: p.Node, Args: []string{p.Everything}}
	everything := config.ResolvedServer{Name: "everything", Written: def, Effective: def, Scope: config.ScopeUser, Trust: config.TrustUser, Availability: config.Available}
	f := start(t, nil, everything, stdio("echo", "echo"))
	ctx := ctxFor(t, 60*time.Second)
	res, err := f.session.Complete(ctx, &mcp.CompleteParams{
		Ref:      &mcp.CompleteReference{Type: "ref/prompt", Name: "everything:completable-prompt"},
		Argument: mcp.CompleteParamsArgument{Name: "department", Value: "S"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"Sales", "Support"}, res.Completion.Values); diff != "" {
		t.Errorf("completion (-want +got):\n%s", diff)
	}
	res, err = f.session.Complete(ctx, &mcp.CompleteParams{
		Ref:      &mcp.CompleteReference{Type: "ref/prompt", Name: "nobody:nothing"},
		Argument: mcp.CompleteParamsArgument{Name: "x", Value: ""},
	})
	if err != nil || len(res.Completion.Values) != 0 {
		t.Errorf("unknown prompt: %v %v", err, res)
	}
}
