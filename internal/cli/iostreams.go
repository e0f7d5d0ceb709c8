package cli

import (
	"bytes"
	"io"
	"os"

	"golang.org/x/term"
)

// IOStreams are a command's standard streams and what is known about the
// terminal. Data goes to Out, diagnostics and progress to ErrOut.
type IOStreams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer
	// IsTTY reports that Out is a terminal: print aligned tables and
	// human wording; otherwise print plain tab-separated rows.
	IsTTY bool
	// CanPrompt reports that a person can answer questions: In and Out are
	// both terminals.
	CanPrompt bool
	// Width is the terminal width in columns (0 when unknown or not a
	// terminal).
	Width int
}

// System returns the process's streams, probing whether they are
// terminals.
func System() *IOStreams {
	outTTY := isTerminal(os.Stdout)
	s := &IOStreams{
		In:        os.Stdin,
		Out:       os.Stdout,
		ErrOut:    os.Stderr,
		IsTTY:     outTTY,
		CanPrompt: outTTY && isTerminal(os.Stdin),
	}
	if outTTY {
		if w, _, err := term.GetSize(int(os.Stdout.Fd())); err == nil {
			s.Width = w
		}
	}
	return s
}

// Test returns streams backed by buffers: stdin (empty), stdout and
// stderr. They are not terminals; set IsTTY to test terminal output.
func Test() (s *IOStreams, in, out, errOut *bytes.Buffer) {
	in, out, errOut = new(bytes.Buffer), new(bytes.Buffer), new(bytes.Buffer)
	return &IOStreams{In: in, Out: out, ErrOut: errOut}, in, out, errOut
}

func isTerminal(f *os.File) bool {
	return term.IsTerminal(int(f.Fd()))
}
