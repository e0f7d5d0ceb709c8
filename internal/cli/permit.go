package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/redact"
	"github.com/switchboard-mcp/switchboard/internal/termsafe"
	"github.com/switchboard-mcp/switchboard/policy"
)

// permissionPolicy loads the permission rules (see package policy) of every scope for
// the workspace of cfg: managed, --settings, local, user and project
// settings. It never fails; problems with the files turn allow rules off
// and are shown by doctor.
func (f *Factory) permissionPolicy(cfg *config.Resolved) *policy.Policy {
	st, err := f.settingsStack(cfg)
	if err != nil {
		// --settings is parsed before any command runs; this cannot
		// happen, but if it did, nothing is allowed unasked.
		st = &config.SettingsStack{Layers: []config.SettingsLayer{{Scope: config.SettingsFlag, Err: err}}}
	}
	return policy.FromSettings(st)
}

// permitFor returns the session's per-call permission check on p, the
// front door's policy in force: p with runtimeOptions.SessionRules, a
// question at the terminal when a person can answer, and a refusal naming
// the rule to add when nobody can. nil (no check) when the command has no
// Policy.
func (s *session) permitFor(p *policy.Policy) host.Permit {
	if s.opts.Policy == nil {
		return nil
	}
	if len(s.opts.SessionRules) > 0 {
		p = p.With(s.opts.SessionRules...)
	}
	po := &host.PermitOptions{UserSettings: s.opts.tilde(policy.UserSettingsPath(s.opts.Home))}
	if s.opts.IO.CanPrompt {
		a := &termAsker{in: s.input(), out: s.opts.IO.ErrOut, line: s.line, tilde: s.opts.tilde}
		if s.opts.Home != "" {
			a.targets = grantTargets(s.opts.Home, s.cfg.Workspace)
		}
		po.Asker = a
	}
	return host.PolicyPermit(p, po)
}

// alwaysRule returns the allow rule an "always" answer to the question of
// d writes: the tool's exact name (policy.ExactRule), which allows it also
// when it declares destructiveHint. "" when no allow rule would let the
// call run without asking (an ask rule decided, or allow rules are off):
// "always" is then not offered.
func alwaysRule(req host.PermitRequest, d policy.Decision) string {
	if d.Suggest == "" {
		return ""
	}
	return policy.ExactRule(policy.Request{Tool: req.Tool, Server: req.Server, ToolName: req.ToolName})
}

// ruleWriter returns where the gateway's "always" answers write: the local
// settings of workspace, else the user settings; nil (not offered) when
// there is no Switchboard directory to write in.
func (o *runtimeOptions) ruleWriter(workspace string) host.RuleWriter {
	if o.Home == "" {
		return nil
	}
	return grantWriter{t: grantTargets(o.Home, workspace)[0], tilde: o.tilde}
}

// grantWriter is the host.RuleWriter of an "always" answer: it writes the
// allow rule to one settings target (comment-preserving, under the file's
// lock).
type grantWriter struct {
	t     grantTarget
	tilde func(string) string
}

func (w grantWriter) Where() string { return w.t.describe(w.tilde) }

func (w grantWriter) WriteAllow(rule string) (string, error) {
	_, _, err := w.t.set(policy.Allow, rule)
	return w.Where(), err
}

// termAsker asks the person at the terminal whether a call may run.
type termAsker struct {
	in   *lineReader
	out  io.Writer
	line *liveLine
	// targets are where "always" can write the rule, the default first
	// (local settings in a workspace, else user); none: not offered.
	targets []grantTarget
	tilde   func(string) string
	mu      sync.Mutex // one question at a time
}

// answerPersist is the terminal's "always": AnswerAlways for the session,
// and the rule written for the sessions after it.
const answerPersist host.Answer = -1

func (a *termAsker) AskPermission(ctx context.Context, req host.PermitRequest, d policy.Decision) (host.Answer, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	release := a.line.Hold()
	defer release()
	fmt.Fprintf(a.out, "\nAllow %s with %s?\n", termsafe.Line(req.Tool), termsafe.Line(redact.ArgsSummary(req.Args, questionArgsMax)))
	fmt.Fprintf(a.out, "  why asked: %s\n", termsafe.Line(d.Reason))
	rule := ""
	if len(a.targets) > 0 {
		rule = alwaysRule(req, d)
	}
	question, help := "  [o]nce · [s]ession · [d]eny: ", "type o (once), s (for this session) or d (deny)"
	if rule != "" {
		fmt.Fprintf(a.out, "  always: writes the allow rule %s to your settings\n", termsafe.Line(fmt.Sprintf("%q", rule)))
		question, help = "  [o]nce · [s]ession · [a]lways · [d]eny: ", "type o (once), s (for this session), a (always: write the rule) or d (deny)"
	}
	v, err := askLoop(ctx, a.in, a.out, question, func(s string) (any, error) {
		switch strings.ToLower(strings.TrimSpace(s)) {
		case "o", "once", "y", "yes":
			return host.AnswerOnce, nil
		case "s", "session":
			return host.AnswerAlways, nil
		case "a", "always":
			if rule != "" {
				return answerPersist, nil
			}
		case "d", "deny", "n", "no":
			return host.AnswerDeny, nil
		}
		return nil, errors.New(help)
	})
	if err != nil {
		if errors.Is(err, errEOF) {
			fmt.Fprintln(a.out, "\n  (input closed: denied)")
			return host.AnswerDeny, nil
		}
		return host.AnswerDeny, err
	}
	if v.(host.Answer) != answerPersist {
		return v.(host.Answer), nil
	}
	t, err := a.pickTarget(ctx)
	if err != nil {
		if errors.Is(err, errEOF) {
			fmt.Fprintln(a.out, "\n  (input closed: denied)")
			return host.AnswerDeny, nil
		}
		return host.AnswerDeny, err
	}
	w := grantWriter{t: t, tilde: a.tilde}
	where, werr := w.WriteAllow(rule)
	if werr != nil {
		fmt.Fprintf(a.out, "  could not write the rule (%s); allowed for this session only\n", termsafe.Line(werr.Error()))
	} else {
		fmt.Fprintf(a.out, "  Wrote the allow rule %s to %s\n", termsafe.Line(fmt.Sprintf("%q", rule)), where)
	}
	return host.AnswerAlways, nil
}

// pickTarget asks where "always" writes when there is a choice: the
// workspace's local settings (the default) or the user settings.
func (a *termAsker) pickTarget(ctx context.Context) (grantTarget, error) {
	if len(a.targets) == 1 {
		return a.targets[0], nil
	}
	local, user := a.targets[0], a.targets[len(a.targets)-1]
	q := fmt.Sprintf("  write it for [w]orkspace %s only (default) or [e]very workspace (user settings)? ", a.tilde(local.Workspace))
	v, err := askLoop(ctx, a.in, a.out, q, func(s string) (any, error) {
		switch strings.ToLower(strings.TrimSpace(s)) {
		case "", "w", "workspace", "l", "local":
			return local, nil
		case "e", "every", "everywhere", "u", "user":
			return user, nil
		}
		return nil, errors.New("type w (this workspace: local settings) or e (every workspace: user settings)")
	})
	if err != nil {
		return grantTarget{}, err
	}
	return v.(grantTarget), nil
}

// deniedErr maps a refused call to exit status 3 with the hint that names
// the rule to add (or the rule that refused).
func deniedErr(err error) error {
	var de *host.DeniedError
	if errors.As(err, &de) {
		if r := de.Decision.Suggest; r != "" && de.Decision.Action != policy.Deny {
			// The command writes the rule, checked, comments kept; the
			// --settings form allows one run only.
			return RefusedErr(err, fmt.Sprintf(`run `+"`switchboard permissions allow %s`"+` to allow it, or allow it for one run with --settings '{"permissions":{"allow":[%q]}}'`,
				shellQuote(r), r))
		}
		return RefusedErr(err, deniedHint(de))
	}
	return RefusedErr(err, "")
}

// questionArgsMax bounds the arguments shown in a permission question.
const questionArgsMax = 400
