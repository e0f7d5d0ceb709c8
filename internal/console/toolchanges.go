package console

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"strings"

	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/termsafe"
)

// The Tool changes page: tools whose definition is not the one pinned
// (docs/security.md, What the model reads), each field as the word diff
// `switchboard tools diff` prints, and Accept — the same pin store and
// effect as `switchboard tools accept`.

// diffPart is one run of a word diff: unchanged, removed ([-…-]) or added
// ({+…+}). Text keeps the markers, so the page reads exactly as the
// terminal does; the marking only colours it.
type diffPart struct {
	Text string
	Kind string // "", "del", "ins"
}

type fieldView struct {
	Field string
	Parts []diffPart
}

type changeView struct {
	host.ToolChange
	Fields []fieldView
	// Definition identifies the definition shown, so that an accept of a
	// page older than the server's latest change is refused.
	Definition string
}

// definitionID is a short hash of a tool's current definition.
func definitionID(c host.ToolChange) string {
	sum := sha256.Sum256(c.Current)
	return hex.EncodeToString(sum[:8])
}

// diffParts splits a word diff into its runs. Everything is the server's
// text: it is made visible (termsafe) and, by the template, escaped.
func diffParts(words string) []diffPart {
	var out []diffPart
	s := termsafe.Line(words)
	for s != "" {
		i := strings.IndexAny(s, "[{")
		if i < 0 {
			out = append(out, diffPart{Text: s})
			break
		}
		open, end, kind := s[i:], "", ""
		switch {
		case strings.HasPrefix(open, "[-"):
			end, kind = "-]", "del"
		case strings.HasPrefix(open, "{+"):
			end, kind = "+}", "ins"
		}
		j := -1
		if kind != "" {
			j = strings.Index(s[i+2:], end)
		}
		if j < 0 {
			out = append(out, diffPart{Text: s[:i+1]})
			s = s[i+1:]
			continue
		}
		if i > 0 {
			out = append(out, diffPart{Text: s[:i]})
		}
		k := i + 2 + j + 2
		out = append(out, diffPart{Text: s[i:k], Kind: kind})
		s = s[k:]
	}
	return out
}

func changeViews(changes []host.ToolChange) []changeView {
	views := make([]changeView, 0, len(changes))
	for _, c := range changes {
		v := changeView{ToolChange: c, Definition: definitionID(c)}
		v.Reason = termsafe.Line(c.Reason)
		for _, d := range c.Changes {
			v.Fields = append(v.Fields, fieldView{Field: termsafe.Line(d.Field), Parts: diffParts(d.Words)})
		}
		views = append(views, v)
	}
	return views
}

// promptChangeView is a prompt change as the page shows it.
type promptChangeView struct {
	host.PromptChange
	Fields     []fieldView
	Definition string
	// Command is the command line that accepts it, the prompt's name one
	// shell word.
	Command string
}

// promptDefinitionID is a short hash of a prompt's current definition.
func promptDefinitionID(c host.PromptChange) string {
	sum := sha256.Sum256(c.Current)
	return hex.EncodeToString(sum[:8])
}

func promptChangeViews(changes []host.PromptChange) []promptChangeView {
	views := make([]promptChangeView, 0, len(changes))
	for _, c := range changes {
		v := promptChangeView{PromptChange: c, Definition: promptDefinitionID(c), Command: termsafe.Line(host.PromptAcceptCommand(c.Server, c.Prompt))}
		v.Reason = termsafe.Line(c.Reason)
		for _, d := range c.Changes {
			v.Fields = append(v.Fields, fieldView{Field: termsafe.Line(d.Field), Parts: diffParts(d.Words)})
		}
		views = append(views, v)
	}
	return views
}

// changesPage is the data of the Tool changes page.
type changesPage struct {
	Tools   []changeView
	Prompts []promptChangeView
}

// promptChanges lists the prompts afresh (a listing decides their pins:
// an accept elsewhere) and returns their changes.
func (c *Console) promptChanges(ctx context.Context) []host.PromptChange {
	_, _, _ = c.front.Host().Prompts(ctx)
	return c.front.Host().PromptChanges()
}

func (c *Console) toolChanges(w http.ResponseWriter, r *http.Request) {
	c.toolList(r.Context()) // a listing decides the pins afresh (an accept elsewhere)
	c.render(w, r, http.StatusOK, "changes.html", page{Title: "Tool changes", Nav: "changes",
		Data: changesPage{Tools: changeViews(c.front.ToolChanges()), Prompts: promptChangeViews(c.promptChanges(r.Context()))}})
}

// acceptTool pins the definition of a changed tool the page showed, if it
// is still the one the host holds: the same store, lock and effect as
// `switchboard tools accept SERVER TOOL`.
func (c *Console) acceptTool(w http.ResponseWriter, r *http.Request) {
	server, tool, def := r.PostForm.Get("server"), r.PostForm.Get("tool"), r.PostForm.Get("definition")
	target := server + " " + tool
	if server == "" || tool == "" {
		c.fail(w, r, http.StatusBadRequest, "accept tool", target, "the form names no server and tool")
		return
	}
	c.toolList(r.Context()) // the changes as they are now, not as an accept elsewhere left them
	var shown *host.ToolChange
	for _, ch := range c.front.ToolChanges() {
		if ch.Server == server && ch.Tool == tool {
			shown = &ch
		}
	}
	switch {
	case shown == nil:
		c.fail(w, r, http.StatusConflict, "accept tool", target, fmt.Sprintf("tool %q of %q is not changed now (accepted already, perhaps in another browser?)", tool, server))
		return
	case definitionID(*shown) != def:
		c.fail(w, r, http.StatusConflict, "accept tool", target, fmt.Sprintf("tool %q of %q changed again since this page showed it: read the change again", tool, server))
		return
	}
	// The definition shown, not the one the server offers by now: a
	// change that came in since is held as a change of its own.
	if err := c.front.AcceptChange(*shown); err != nil {
		c.fail(w, r, http.StatusConflict, "accept tool", target, err.Error())
		return
	}
	c.audit(r, sessionOf(r), "accept tool", target, "pinned "+tool+" as it is now ("+def+")")
	c.done(w, r, "/changes", fmt.Sprintf("Accepted %s of %s: pinned as it is now, and served.", tool, server))
}

// acceptPrompt pins the definition of a changed prompt the page showed,
// if it is still the one the host holds: the same store and effect as
// `switchboard tools accept SERVER --prompt=PROMPT`.
func (c *Console) acceptPrompt(w http.ResponseWriter, r *http.Request) {
	server, prompt, def := r.PostForm.Get("server"), r.PostForm.Get("prompt"), r.PostForm.Get("definition")
	target := server + " prompt " + prompt
	if server == "" || prompt == "" {
		c.fail(w, r, http.StatusBadRequest, "accept prompt", target, "the form names no server and prompt")
		return
	}
	var shown *host.PromptChange
	for _, ch := range c.promptChanges(r.Context()) {
		if ch.Server == server && ch.Prompt == prompt {
			shown = &ch
		}
	}
	switch {
	case shown == nil:
		c.fail(w, r, http.StatusConflict, "accept prompt", target, fmt.Sprintf("prompt %q of %q is not changed now (accepted already, perhaps in another browser?)", prompt, server))
		return
	case promptDefinitionID(*shown) != def:
		c.fail(w, r, http.StatusConflict, "accept prompt", target, fmt.Sprintf("prompt %q of %q changed again since this page showed it: read the change again", prompt, server))
		return
	}
	if err := c.front.Host().AcceptPromptChange(*shown); err != nil {
		c.fail(w, r, http.StatusConflict, "accept prompt", target, err.Error())
		return
	}
	c.audit(r, sessionOf(r), "accept prompt", target, "pinned prompt "+prompt+" as it is now ("+def+")")
	c.done(w, r, "/changes", fmt.Sprintf("Accepted prompt %s of %s: pinned as it is now, and served.", prompt, server))
}
