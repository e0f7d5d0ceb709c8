package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"sync"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/redact"
	"github.com/switchboard-mcp/switchboard/internal/termsafe"
	"github.com/switchboard-mcp/switchboard/policy"
)

// permissionPolicy loads the permission rules (SPEC §3) of every scope for
// the workspace of cfg: managed, --settings, local, user and project
// settings. It never fails; problems with the files turn allow rules off
// and are shown by doctor.
func (f *Factory) permissionPolicy(cfg *config.Resolved) *policy.Policy {
	o := &policy.LoadOptions{Home: f.Home(), LookupEnv: f.Getenv}
	if cfg != nil {
		o.Workspace = cfg.Workspace
		if cfg.Files.Managed != "" {
			o.ManagedDir = filepath.Dir(cfg.Files.Managed)
		}
	}
	if s, err := f.Settings(); err == nil && s != nil {
		o.Flag = s
		if arg := f.global().Settings; !strings.HasPrefix(strings.TrimSpace(arg), "{") {
			o.FlagFile = f.abs(arg)
		}
	}
	return policy.Load(o)
}

// permit returns the session's per-call permission check: the rules of
// runtimeOptions.Policy and SessionRules, a question at the terminal when a person can answer, and a
// refusal naming the rule to add when nobody can. nil (no check) when the
// command has no Policy.
func (s *session) permit(cfg *config.Resolved) host.Permit {
	if s.opts.Policy == nil {
		return nil
	}
	p := s.opts.Policy(cfg)
	if len(s.opts.SessionRules) > 0 {
		p = p.With(s.opts.SessionRules...)
	}
	po := &host.PermitOptions{UserSettings: s.opts.tilde(policy.UserSettingsPath(s.opts.Home))}
	if s.opts.IO.CanPrompt {
		po.Asker = &termAsker{in: s.input(), out: s.opts.IO.ErrOut, line: s.line}
	}
	return host.PolicyPermit(p, po)
}

// termAsker asks the person at the terminal whether a call may run.
type termAsker struct {
	in   *lineReader
	out  io.Writer
	line *liveLine
	mu   sync.Mutex // one question at a time
}

func (a *termAsker) AskPermission(ctx context.Context, req host.PermitRequest, d policy.Decision) (host.Answer, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	release := a.line.Hold()
	defer release()
	fmt.Fprintf(a.out, "\nAllow %s with %s?\n", termsafe.Line(req.Tool), termsafe.Line(redact.ArgsSummary(req.Args, questionArgsMax)))
	fmt.Fprintf(a.out, "  why asked: %s\n", termsafe.Line(d.Reason))
	v, err := askLoop(ctx, a.in, a.out, "  [o]nce, [a]lways for this session, [d]eny: ", func(s string) (any, error) {
		switch strings.ToLower(strings.TrimSpace(s)) {
		case "o", "once", "y", "yes":
			return host.AnswerOnce, nil
		case "a", "always":
			return host.AnswerAlways, nil
		case "d", "deny", "n", "no":
			return host.AnswerDeny, nil
		}
		return nil, errors.New("type o (once), a (always for this session) or d (deny)")
	})
	if err != nil {
		if errors.Is(err, errEOF) {
			fmt.Fprintln(a.out, "\n  (input closed: denied)")
			return host.AnswerDeny, nil
		}
		return host.AnswerDeny, err
	}
	return v.(host.Answer), nil
}

// deniedErr maps a refused call to exit status 3 with the hint that names
// the rule to add (or the rule that refused).
func deniedErr(err error) error {
	var de *host.DeniedError
	if errors.As(err, &de) {
		return RefusedErr(err, de.Hint)
	}
	return RefusedErr(err, "")
}

// questionArgsMax bounds the arguments shown in a permission question.
const questionArgsMax = 400
