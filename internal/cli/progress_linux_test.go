package cli

import (
	"os"
	"strconv"
	"testing"

	"golang.org/x/sys/unix"
)

// openPTY returns the terminal end of a new pseudo-terminal.
func openPTY(t *testing.T) *os.File {
	t.Helper()
	_, pts := openPTYPair(t)
	return pts
}

// openPTYPair returns both ends of a new pseudo-terminal: ptm is the
// keyboard and screen (what is written to it is typed; what the terminal
// echoes and shows is read from it), pts the terminal a program uses.
func openPTYPair(t *testing.T) (ptm, pts *os.File) {
	t.Helper()
	ptm, err := os.OpenFile("/dev/ptmx", os.O_RDWR, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	t.Cleanup(func() { ptm.Close() })
	if err := unix.IoctlSetPointerInt(int(ptm.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetInt(int(ptm.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	pts, err = os.OpenFile("/dev/pts/"+strconv.Itoa(n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pts.Close() })
	return ptm, pts
}

// Progress is redrawn with \r only on a terminal that can take it: not
// piped, and not TERM=dumb (issue 17).
func TestProgressNotOnDumbTerminal(t *testing.T) {
	pts := openPTY(t)
	for _, tc := range []struct {
		term string
		want bool
	}{{"xterm-256color", true}, {"dumb", false}, {"", true}} {
		t.Setenv("TERM", tc.term)
		if got := stderrIsTerminal(&IOStreams{ErrOut: pts}); got != tc.want {
			t.Errorf("TERM=%q: progress drawn = %v, want %v", tc.term, got, tc.want)
		}
	}
}
