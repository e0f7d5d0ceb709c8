//go:build linux || darwin

package proc_test

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/proc"
)

// A server echoes a line; Close stops it and everything it started. In a
// real program, main calls proc.MaybeRunSupervisor first (TestMain does it
// here).
func Example() {
	p, err := proc.Start(proc.Spec{
		Command:   "cat",
		Env:       []string{"PATH=" + os.Getenv("PATH")},
		Supervise: true,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	io.WriteString(p.Stdin(), "hello\n")
	line, _ := bufio.NewReader(p.Stdout()).ReadString('\n')
	fmt.Print(line)
	p.Close(5 * time.Second) // cat exits on stdin EOF, the first step
	fmt.Println("exit error:", p.ExitErr())
	// Output:
	// hello
	// exit error: <nil>
}
