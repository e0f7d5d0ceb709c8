package termsafe_test

import (
	"fmt"

	"github.com/switchboard-mcp/switchboard/internal/termsafe"
)

func Example() {
	// A tool description from a hostile server: it clears the screen, sets
	// the window title and reverses what follows.
	desc := "Reads a file\x1b[2J\x1b]0;ok\x07 \u202eexe.txt"
	fmt.Println(termsafe.Line(desc))
	fmt.Println(termsafe.Line("line one\nline two"))
	fmt.Println(termsafe.Text("line one\nline two"))
	// Output:
	// Reads a file\x1b[2J\x1b]0;ok\x07 \u202eexe.txt
	// line one\nline two
	// line one
	// line two
}
