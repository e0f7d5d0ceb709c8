package host

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/switchboard-mcp/switchboard/config"
)

// A SecretSource gives the values of ${secret:NAME} references
// (Options.Secrets). The CLI's looks in the user's credential store and,
// on a terminal, asks for a missing one once and stores it.
type SecretSource interface {
	// Secret returns the value of the secret name, which server's
	// definition refers to. Its error says why there is none and becomes
	// the server's status reason, after the secret and field it was for
	// (a *config.SecretError wraps it: errors.As finds both).
	Secret(ctx context.Context, server, name string) (string, error)
}

// SecretFunc adapts a function to a SecretSource.
type SecretFunc func(ctx context.Context, server, name string) (string, error)

// Secret calls f.
func (f SecretFunc) Secret(ctx context.Context, server, name string) (string, error) {
	return f(ctx, server, name)
}

// errSecret marks a start that failed on a secret: retrying on another
// protocol revision cannot help.
var errSecret = errors.New("cannot start")

// definition is what the server runs: its effective definition with its
// secrets resolved (config.ResolveSecrets), each value known to the
// scrubber before it is used anywhere.
func (s *server) definition(ctx context.Context) (config.Server, error) {
	if len(s.cfg.Secrets) == 0 {
		return s.cfg.Effective, nil
	}
	src := s.h.opts.Secrets
	if src == nil {
		return config.Server{}, fmt.Errorf("%w: it names secrets (%s) and no secret store was given to this host", errSecret, strings.Join(s.cfg.Secrets, ", "))
	}
	def, err := config.ResolveSecrets(&s.cfg, s.h.opts.LookupEnv, func(name string) (string, error) {
		v, err := src.Secret(ctx, s.name, name)
		if err == nil {
			s.h.secrets.Add(secretParts(v)...)
		}
		return v, err
	})
	if err != nil {
		return config.Server{}, fmt.Errorf("%w: %w", errSecret, err)
	}
	return def, nil
}

// secretParts are the texts of a value to scrub: the value, and each of
// its lines (a multi-line key is often printed line by line).
func secretParts(v string) []string {
	out := []string{v}
	if strings.ContainsAny(v, "\r\n") {
		for _, line := range strings.FieldsFunc(v, func(r rune) bool { return r == '\n' || r == '\r' }) {
			out = append(out, strings.TrimSpace(line))
		}
	}
	return out
}
