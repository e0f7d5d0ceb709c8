package host

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/proc"
)

// runOnce runs a helper program to completion — a headersHelper, a call
// hook: it writes input to its stdin and closes it, and returns its stdout,
// at most limit bytes. timeout (and ctx) bound the run; when it ends the
// program is killed (its whole group, and under the supervisor everything
// it started). Errors read after the program's name: "did not start: …",
// "did not finish within 10s", "printed more than 64 KiB", "failed: exit
// status 1: <its last stderr line>".
func runOnce(ctx context.Context, spec proc.Spec, input []byte, limit int, timeout, grace time.Duration) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	p, err := proc.Start(spec)
	if err != nil {
		return nil, fmt.Errorf("did not start: %v", err)
	}
	defer p.Close(grace)
	go func() {
		if len(input) > 0 {
			_, _ = p.Stdin().Write(input) // a program that does not read: EPIPE, then its exit says more
		}
		p.Stdin().Close()
	}()
	type read struct {
		out []byte
		err error
	}
	ch := make(chan read, 1)
	go func() {
		out, err := io.ReadAll(io.LimitReader(p.Stdout(), int64(limit)+1))
		ch <- read{out, err}
	}()
	within := func() error {
		if ctx.Err() == context.DeadlineExceeded {
			return fmt.Errorf("did not finish within %s", timeout)
		}
		return errors.New("did not finish: " + ctx.Err().Error())
	}
	var out []byte
	select {
	case r := <-ch:
		out = r.out
	case <-ctx.Done():
		p.Kill()
		return nil, within()
	}
	if len(out) > limit {
		p.Kill()
		return nil, fmt.Errorf("printed more than %d KiB", limit>>10)
	}
	select {
	case <-p.Done():
	case <-ctx.Done():
		p.Kill()
		return nil, within()
	}
	if err := p.ExitErr(); err != nil {
		msg := fmt.Sprintf("failed: %v", err)
		p.WaitStderr(stderrDrain)
		if l := reasonLine(p.StderrTail(reasonTailLines)); l != "" {
			msg += ": " + l
		}
		return nil, errors.New(msg)
	}
	return out, nil
}
