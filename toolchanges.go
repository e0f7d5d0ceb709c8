package switchboard

import (
	"context"
	"errors"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/host"
)

// ToolChangeAsker is implemented by a [Prompter] that can ask the person
// about a tool whose definition changed since it was pinned
// (docs/security.md, What the model reads): a terminal shows the change
// word by word. With one, "toolChanges" defaults to "ask"; without,
// to "notify". Only (true, nil) accepts the change.
type ToolChangeAsker interface {
	AcceptToolChange(ctx context.Context, c host.ToolChange) (bool, error)
}

// toolChangeMode is the "toolChanges" setting of st, or the default: ask
// when the Prompter can ask, notify when nobody can.
func (sb *Switchboard) toolChangeMode(st *config.SettingsStack) config.ToolChangeMode {
	if m, _ := st.ToolChanges(); m != "" {
		return m
	}
	if _, ok := sb.opts.Prompter.(ToolChangeAsker); ok {
		return config.ToolChangesAsk
	}
	return config.ToolChangesNotify
}

// callHooks are the call hooks of st, and the problems of those that
// cannot be read, each a line naming file:line:col.
func callHooks(st *config.SettingsStack) ([]config.CallHook, []string) {
	hooks, diags := st.CallHooks()
	var problems []string
	for _, d := range diags {
		if d.Severity == config.SeverityError {
			p := d.Message
			if pos := d.Position.String(); pos != "" { // inline --settings has none
				p = pos + ": " + p
			}
			problems = append(problems, p)
		}
	}
	return hooks, problems
}

// ToolChanges returns every tool whose definition is not the one pinned
// for it in this workspace, as the servers last listed them: held (a
// project server's, or under "toolChanges": "ask"), served ("notify") or
// just accepted ("accept"), each with the fields that changed, word by
// word. Host events of kind host.EventToolChange report new ones as they
// are seen ([Switchboard.Subscribe]); [host.ServerStatus] has them per
// server.
func (sb *Switchboard) ToolChanges() []host.ToolChange { return sb.host.ToolChanges() }

// AcceptTools pins the definitions server's tools have now: the named
// tools, or every changed one when none is named. Held tools are served
// from then on, and gateways tell their clients the list changed. It
// returns the tools it pinned.
func (sb *Switchboard) AcceptTools(server string, tools ...string) ([]string, error) {
	if err := sb.viewClosed(); err != nil {
		return nil, err
	}
	return sb.host.AcceptTools(server, tools...)
}

// AcceptChange pins the definition c shows (c.Current), c being a change
// [Switchboard.ToolChanges] reported and a person was shown: a definition
// the server offers in its place by then is held as a change of its own,
// never pinned unseen ([host.Host.AcceptChange]).
func (sb *Switchboard) AcceptChange(c host.ToolChange) error {
	if err := sb.viewClosed(); err != nil {
		return err
	}
	return sb.host.AcceptChange(c)
}

// AskToolChanges asks the Prompter, when it is a [ToolChangeAsker], about
// every held tool change, one at a time, and accepts those it accepts (the
// definition it was shown: see [host.Host.AcceptChange]). It
// returns the first error that is not a plain no; after Close,
// host.ErrClosed (nothing can be accepted).
func (sb *Switchboard) AskToolChanges(ctx context.Context) error {
	if err := sb.closedErr(); err != nil {
		return err
	}
	asker, ok := sb.opts.Prompter.(ToolChangeAsker)
	if !ok {
		return nil
	}
	var first error
	for _, c := range sb.host.ToolChanges() {
		if c.State != host.ChangeHeld {
			continue
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		yes, err := asker.AcceptToolChange(ctx, c)
		if err != nil && !errors.Is(err, ErrNotApproved) && first == nil {
			first = err
		}
		if err != nil || !yes {
			continue
		}
		if err := sb.host.AcceptChange(c); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// heldChanges reports whether the Prompter can be asked about a held tool
// change there is.
func (sb *Switchboard) heldChanges() bool {
	if _, ok := sb.opts.Prompter.(ToolChangeAsker); !ok {
		return false
	}
	for _, c := range sb.host.ToolChanges() {
		if c.State == host.ChangeHeld {
			return true
		}
	}
	return false
}

// AskHeld asks the Prompter, when it is a [ToolChangeAsker], about the
// change that holds the tool of err (a call's *host.HeldToolError), and
// reports whether it was accepted: the call may be made again.
func (sb *Switchboard) AskHeld(ctx context.Context, err error) bool {
	var he *host.HeldToolError
	if !errors.As(err, &he) || sb.closedErr() != nil {
		return false
	}
	return sb.askHeld(ctx, he, nil)
}

// askHeld is AskHeld of one held tool, asking asker (nil: the Prompter,
// when it is a ToolChangeAsker).
func (sb *Switchboard) askHeld(ctx context.Context, he *host.HeldToolError, asker ToolChangeAsker) bool {
	if asker == nil {
		var ok bool
		if asker, ok = sb.opts.Prompter.(ToolChangeAsker); !ok {
			return false
		}
	}
	for _, c := range sb.host.ToolChanges() {
		if c.Server != he.Server || c.Tool != he.Tool || c.State != host.ChangeHeld {
			continue
		}
		if yes, err := asker.AcceptToolChange(ctx, c); err != nil || !yes {
			return false
		}
		// What was shown is pinned; what the server offers by now may
		// differ, and is then held as a change of its own.
		return sb.host.AcceptChange(c) == nil
	}
	return false
}

// PromptChanges returns every prompt whose definition is not the one
// pinned for it in this workspace, as the servers last listed them (a
// server's prompts are decided when they are listed: [host.Host.Prompts],
// a GetPrompt, a gateway's list): held (a project server's, or under
// "toolChanges": "ask"), served ("notify") or just accepted ("accept").
// Host events of kind host.EventPromptChange report new ones as they are
// seen ([Switchboard.Subscribe]). No one is asked about a prompt change:
// a held prompt waits for [Switchboard.AcceptPromptChange] or
// [Switchboard.AcceptPrompts].
func (sb *Switchboard) PromptChanges() []host.PromptChange { return sb.host.PromptChanges() }

// AcceptPrompts pins the definitions server's prompts have now, as it
// last listed them: the named prompts, or every changed one when none is
// named. Held prompts are served from then on, and gateways tell their
// clients the list changed. It returns the changes it pinned. After Close
// it fails with host.ErrClosed.
func (sb *Switchboard) AcceptPrompts(server string, prompts ...string) ([]host.PromptChange, error) {
	if err := sb.closedErr(); err != nil {
		return nil, err
	}
	return sb.host.AcceptPromptChanges(server, prompts...)
}

// AcceptPromptChange pins the definition c shows (c.Current), c being a
// change [Switchboard.PromptChanges] or an EventPromptChange reported and
// a person was shown: a definition the server offers in its place by then
// is held as a change of its own, never pinned unseen
// ([host.Host.AcceptPromptChange]). After Close it fails with
// host.ErrClosed.
func (sb *Switchboard) AcceptPromptChange(c host.PromptChange) error {
	if err := sb.closedErr(); err != nil {
		return err
	}
	return sb.host.AcceptPromptChange(c)
}
