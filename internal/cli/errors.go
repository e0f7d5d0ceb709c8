package cli

import (
	"errors"
	"fmt"

	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/oauth"
)

// Exit codes, a contract scripts rely on (README, The CLI). Main is the only
// place that turns errors into them.
const (
	ExitOK      = 0
	ExitFailure = 1 // the command failed, including a tool result with isError and a name that names nothing (an unknown server, tool or prompt)
	ExitUsage   = 2 // a command line that is wrong, or bad configuration
	ExitRefused = 3 // refused by launch trust or a permission rule
)

// ExitError is an error that says which exit code it means and, in Hint,
// one line telling the user what to do about it. Main prints Err as one
// line on stderr, then the hint, and exits with Code.
//
// A nil Err means the problem was already reported (for example each
// configuration diagnostic, printed after the valid servers) and only the
// exit code is left to give.
type ExitError struct {
	Code int
	Err  error
	Hint string
}

func (e *ExitError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("exit status %d", e.Code)
	}
	return e.Err.Error()
}

func (e *ExitError) Unwrap() error { return e.Err }

// UsageErr is a command-line mistake: exit code 2.
func UsageErr(err error, hint string) *ExitError {
	return &ExitError{Code: ExitUsage, Err: err, Hint: hint}
}

// ConfigErr is bad configuration input (a file or flag value): exit code 2.
func ConfigErr(err error, hint string) *ExitError {
	return &ExitError{Code: ExitUsage, Err: err, Hint: hint}
}

// RefusedErr is an action refused by launch trust or a permission rule:
// exit code 3. The hint should name the rule or command that would allow
// it.
func RefusedErr(err error, hint string) *ExitError {
	return &ExitError{Code: ExitRefused, Err: err, Hint: hint}
}

// FailureErr is a command that ran and failed (a server not found, a call
// that failed, a tool result with isError): exit code 1.
func FailureErr(err error, hint string) *ExitError {
	return &ExitError{Code: ExitFailure, Err: err, Hint: hint}
}

// Usagef, Configf and Failuref are the formatted shorthands of UsageErr,
// ConfigErr and FailureErr, for the common case of a new message.
func Usagef(hint, format string, args ...any) *ExitError {
	return UsageErr(fmt.Errorf(format, args...), hint)
}

// Configf: see Usagef.
func Configf(hint, format string, args ...any) *ExitError {
	return ConfigErr(fmt.Errorf(format, args...), hint)
}

// Failuref: see Usagef.
func Failuref(hint, format string, args ...any) *ExitError {
	return FailureErr(fmt.Errorf(format, args...), hint)
}

// silentExit is returned by a command that has printed all it had to say
// and only needs the exit code; see ExitError.
func silentExit(code int) *ExitError { return &ExitError{Code: code} }

// exitCode maps any error to its exit code: an *ExitError anywhere in the
// chain decides; a call refused by a permission rule (host.ErrDenied) is
// 3; everything else is a failure.
func exitCode(err error) int {
	if err == nil {
		return ExitOK
	}
	var ee *ExitError
	if errors.As(err, &ee) {
		return ee.Code
	}
	if errors.Is(err, host.ErrDenied) {
		return ExitRefused
	}
	return ExitFailure
}

// authHint is what the user can do about an OAuth error: the commands that
// log in (again). "" for any other error. The library's errors name no
// command; the CLI adds this to a server's status reason (host's
// ErrorHint) and as the hint of a failed command.
func authHint(err error) string {
	var kf *oauth.KeyFileError
	var lr *oauth.LoginRequiredError
	switch {
	case errors.As(err, &kf):
		return fmt.Sprintf("run `switchboard mcp logout %s`, then `switchboard mcp login %s`", kf.Server, kf.Server)
	case errors.As(err, &lr):
		return fmt.Sprintf("run `switchboard mcp login %s`", lr.Server)
	}
	return ""
}
