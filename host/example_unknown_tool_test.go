package host_test

import (
	"errors"
	"fmt"

	"github.com/switchboard-mcp/switchboard/host"
)

// A front end branches on the error of a call of a name no server offers
// and adds its own advice: the error says only what is known.
func ExampleUnknownToolError() {
	var err error = &host.UnknownToolError{Name: "mcp__github__nope", Server: "github"}
	var ue *host.UnknownToolError
	if errors.Is(err, host.ErrUnknownTool) && errors.As(err, &ue) {
		fmt.Println(err)
		fmt.Printf("list the tools of %s to pick another\n", ue.Server)
	}
	fmt.Println(&host.UnknownToolError{Name: "mcp__ghost__x"})
	// Output:
	// unknown tool "mcp__github__nope": server github has no such tool
	// list the tools of github to pick another
	// unknown tool "mcp__ghost__x": no configured server matches
}
