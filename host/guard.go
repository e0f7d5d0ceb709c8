package host

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/internal/redact"
	"github.com/switchboard-mcp/switchboard/toolsurface"
)

// BlockedMetaKey is the _meta key of a result Switchboard put in place of
// a call or a result it refused (a secret, a call hook): its value is the
// reason. See Blocked.
const BlockedMetaKey = "io.switchboard/blocked"

// Blocked reports whether res is Switchboard's refusal of a call or of
// its result — by the server's "secrets" mode or a call hook — rather
// than the tool's own answer, and why. Such a result has IsError set and
// says why in its text, which the model reads.
func Blocked(res *mcp.CallToolResult) (string, bool) {
	if res == nil {
		return "", false
	}
	why, ok := res.Meta[BlockedMetaKey].(string)
	return why, ok
}

func blockedResult(reason string) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: reason}},
		Meta: mcp.Meta{BlockedMetaKey: reason}}
}

// CallReport collects what the Host did to one call on its way to the
// model — the call hooks' decisions, the deceptive characters found in
// its result, the secrets replaced or blocked — for an audit line. Put
// one in the call's context with WithCallReport. Safe for concurrent use.
type CallReport struct {
	mu       sync.Mutex
	hooks    []HookDecision
	findings []toolsurface.TextFinding
	secrets  []string
}

// CallNotes is a CallReport's content.
type CallNotes struct {
	Hooks []HookDecision `json:"hooks,omitempty"`
	// Findings are the deceptive characters found in the result.
	Findings []toolsurface.TextFinding `json:"findings,omitempty"`
	// Secrets says what was done about secrets: "2 known secret values
	// replaced", "result blocked: it holds a GitHub token…".
	Secrets []string `json:"secrets,omitempty"`
}

type callReportKey struct{}

// WithCallReport returns a context whose Call fills r.
func WithCallReport(ctx context.Context, r *CallReport) context.Context {
	return context.WithValue(ctx, callReportKey{}, r)
}

func reportFrom(ctx context.Context) *CallReport {
	r, _ := ctx.Value(callReportKey{}).(*CallReport)
	return r
}

// Notes returns what the report holds so far.
func (r *CallReport) Notes() CallNotes {
	if r == nil {
		return CallNotes{}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return CallNotes{Hooks: append([]HookDecision(nil), r.hooks...),
		Findings: append([]toolsurface.TextFinding(nil), r.findings...), Secrets: append([]string(nil), r.secrets...)}
}

func (r *CallReport) hook(d HookDecision) {
	if r != nil {
		r.mu.Lock()
		r.hooks = append(r.hooks, d)
		r.mu.Unlock()
	}
}

func (r *CallReport) found(f []toolsurface.TextFinding) {
	if r != nil && len(f) > 0 {
		r.mu.Lock()
		r.findings = append(r.findings, f...)
		r.mu.Unlock()
	}
}

func (r *CallReport) secret(what string) {
	if r != nil {
		r.mu.Lock()
		r.secrets = append(r.secrets, what)
		r.mu.Unlock()
	}
}

// secretsMode is server's "secrets" mode in the configuration in force.
func (h *Host) secretsMode(server string) config.SecretsMode {
	if cfg := h.Config(); cfg != nil {
		if rs := cfg.Server(server); rs != nil {
			return rs.Effective.Secrets
		}
	}
	return ""
}

// guardedCall makes a call that was resolved and permitted, and turns its
// result into what the model may read: the server's "secrets" mode and
// the before hooks may refuse the call; the result is cleaned of
// deceptive characters, the secret values the Host gave any server are
// replaced, the "secrets" mode and the after hooks may redact or withhold
// it (docs/security.md, What the model reads).
func (h *Host) guardedCall(ctx context.Context, s *server, tool string, args any) (*mcp.CallToolResult, error) {
	rep := reportFrom(ctx)
	if _, problems := h.callHooks(); len(problems) > 0 {
		why := "Switchboard refused this call: the call hooks in your settings cannot be read (" +
			strings.Join(problems, "; ") + ")"
		h.log.Warn("call refused: call hooks cannot be read", "server", s.name, "tool", tool)
		return blockedResult(why), nil
	}
	mode := h.secretsMode(s.name)
	before, after := h.hooksFor(s.name, tool, "before"), h.hooksFor(s.name, tool, "after")
	var argsJSON json.RawMessage
	if mode == config.SecretsBlock || len(before)+len(after) > 0 {
		argsJSON = rawArgs(args)
	}
	if mode == config.SecretsBlock {
		if what := h.secretIn(argsJSON); what != "" {
			why := fmt.Sprintf("Switchboard blocked this call: its arguments hold %s, and server %s is set to \"secrets\": \"block\"", what, s.name)
			rep.secret("call blocked: arguments hold " + what)
			h.log.Warn("call blocked: its arguments hold a secret", "server", s.name, "tool", tool, "secret", what)
			return blockedResult(why), nil
		}
	}
	var hreq *HookRequest
	if len(before)+len(after) > 0 {
		hreq = &HookRequest{Version: HookContractVersion, Tool: toolName(s.name, tool), Server: s.name, ServerTool: tool,
			Scope: string(s.cfg.Scope), Workspace: h.workspace(), Arguments: argsJSON}
	}
	if len(before) > 0 {
		hreq.Phase = "before"
		for _, hk := range before {
			if res := h.runHook(ctx, hk, hreq, nil); res != nil {
				return res, nil
			}
		}
	}
	res, err := s.call(ctx, tool, args)
	if err != nil || res == nil {
		return res, err
	}
	res = h.guardResult(s.name, tool, mode, res, rep)
	if res.IsError {
		res = s.protectedNote(res)
	}
	if _, blocked := Blocked(res); blocked || len(after) == 0 {
		return res, nil
	}
	hreq.Phase, hreq.Result = "after", res
	for _, hk := range after {
		out := h.runHook(ctx, hk, hreq, &res)
		if out != nil {
			return out, nil
		}
		hreq.Result = res
	}
	return res, nil
}

// rawArgs is a call's arguments as JSON.
func rawArgs(args any) json.RawMessage {
	if args == nil {
		return json.RawMessage("{}")
	}
	if raw, ok := jsonText(args); ok {
		return raw
	}
	b, err := json.Marshal(args)
	if err != nil {
		return json.RawMessage("{}")
	}
	return b
}

// secretIn names the secret the arguments hold ("a secret value
// Switchboard gave a server", "a GitHub token (…)"), or "".
func (h *Host) secretIn(args json.RawMessage) string {
	var v any
	if json.Unmarshal(args, &v) != nil {
		v = string(args)
	}
	found := ""
	walkStrings(v, func(s string) {
		if found != "" {
			return
		}
		if _, n := h.secrets.Known(s); n > 0 {
			found = "a secret value Switchboard gave a server"
			return
		}
		if _, names := redact.Tokens(s); len(names) > 0 {
			found = "what looks like a " + names[0]
		}
	})
	return found
}

// walkStrings calls f with every string of a decoded JSON value, keys
// included.
func walkStrings(v any, f func(string)) {
	switch x := v.(type) {
	case string:
		f(x)
	case map[string]any:
		for k, e := range x {
			f(k)
			walkStrings(e, f)
		}
	case []any:
		for _, e := range x {
			walkStrings(e, f)
		}
	}
}

// replaceKnown is the text mapping that replaces the secret values
// Switchboard gave servers, counting them in *n.
func (h *Host) replaceKnown(n *int) func(string) (string, bool) {
	return func(s string) (string, bool) {
		out, k := h.secrets.Known(s)
		*n += k
		return out, k > 0
	}
}

// knownBytes returns b with the secret values Switchboard gave servers
// replaced, counting them in *n, and whether it replaced any: binary data
// a client decodes (a blob, an image) can hold them as bytes.
func (h *Host) knownBytes(b []byte, n *int) ([]byte, bool) {
	if len(b) < redact.MinSecretLen {
		return b, false
	}
	out, k := h.secrets.Known(string(b))
	if k == 0 {
		return b, false
	}
	*n += k
	return []byte(out), true
}

// guardBlobs returns res with the secret values Switchboard gave servers
// replaced in the binary data of its content blocks (an image's, an
// audio's, an embedded resource's blob), which MapResultText leaves as it
// is; res itself when none holds one. res is never modified.
func (h *Host) guardBlobs(res *mcp.CallToolResult, n *int) *mcp.CallToolResult {
	var content []mcp.Content
	for i, c := range res.Content {
		var cc mcp.Content
		switch c := c.(type) {
		case *mcp.ImageContent:
			if c == nil {
				continue
			}
			if d, ok := h.knownBytes(c.Data, n); ok {
				x := *c
				x.Data, cc = d, &x
			}
		case *mcp.AudioContent:
			if c == nil {
				continue
			}
			if d, ok := h.knownBytes(c.Data, n); ok {
				x := *c
				x.Data, cc = d, &x
			}
		case *mcp.EmbeddedResource:
			if c == nil || c.Resource == nil {
				continue
			}
			if d, ok := h.knownBytes(c.Resource.Blob, n); ok {
				r := *c.Resource
				r.Blob = d
				x := *c
				x.Resource, cc = &r, &x
			}
		}
		if cc == nil {
			continue
		}
		if content == nil {
			content = slices.Clone(res.Content)
		}
		content[i] = cc
	}
	if content == nil {
		return res
	}
	c := *res
	c.Content = content
	return &c
}

// guardSplit returns res with each run of consecutive text blocks that
// holds a secret value Switchboard gave servers across the blocks'
// boundaries (written in pieces, which a client reads one after the
// other) made one text block, the first's, with the value replaced; res
// itself when no run does. Run after each block's own values are
// replaced, so that only what spans blocks is left to find.
func (h *Host) guardSplit(res *mcp.CallToolResult, n *int) *mcp.CallToolResult {
	var content []mcp.Content
	for i := 0; i < len(res.Content); {
		j := i
		var joined strings.Builder
		for ; j < len(res.Content); j++ {
			tc, ok := res.Content[j].(*mcp.TextContent)
			if !ok || tc == nil {
				break
			}
			joined.WriteString(tc.Text)
		}
		if j-i >= 2 {
			if text, k := h.secrets.Known(joined.String()); k > 0 {
				if content == nil {
					content = slices.Clone(res.Content[:i])
				}
				first := *res.Content[i].(*mcp.TextContent)
				first.Text = text
				content = append(content, &first)
				*n += k
				i = j
				continue
			}
		}
		j = max(j, i+1)
		if content != nil {
			content = append(content, res.Content[i:j]...)
		}
		i = j
	}
	if content == nil {
		return res
	}
	c := *res
	c.Content = content
	return &c
}

// guardRead returns a resource read with the secret values Switchboard
// gave servers replaced in each content's URI, MIME type, text, blob and
// _meta, and in its own _meta, as in a result: a read goes to the model, a gateway's client or the
// terminal. Nothing else is changed (contents are data). res itself when
// nothing was replaced.
func (h *Host) guardRead(server string, res *mcp.ReadResourceResult) *mcp.ReadResourceResult {
	if res == nil {
		return nil
	}
	known := 0
	f := h.replaceKnown(&known)
	contents := make([]*mcp.ResourceContents, len(res.Contents))
	for i, rc := range res.Contents {
		contents[i] = rc
		if rc == nil {
			continue
		}
		before := known
		c := *rc
		c.URI, _ = f(rc.URI)
		c.MIMEType, _ = f(rc.MIMEType)
		c.Text, _ = f(rc.Text)
		c.Blob, _ = h.knownBytes(rc.Blob, &known)
		var metaChanged bool
		if c.Meta, metaChanged = h.knownMeta(rc.Meta); metaChanged {
			known++
		}
		if known > before {
			contents[i] = &c
		}
	}
	meta, metaChanged := h.knownMeta(res.Meta)
	if known == 0 && !metaChanged {
		return res
	}
	h.log.Warn("a resource read held a secret value Switchboard gave a server; it was replaced", "server", server)
	c := *res
	c.Contents, c.Meta = contents, meta
	return &c
}

// guardProgress returns p with its message as a result's text would be:
// cleaned of deceptive characters and the known secret values replaced.
// A progress message goes to the caller (a gateway's client, a person at
// a terminal) as a result does; the whole notification, _meta and a
// token the server made up included, goes to an embedder's events (which
// it may log), so the known values are replaced there too. p itself when
// nothing changed.
func (h *Host) guardProgress(p *mcp.ProgressNotificationParams) *mcp.ProgressNotificationParams {
	if p == nil {
		return p
	}
	msg := p.Message
	if msg != "" {
		msg, _ = toolsurface.CleanText(msg)
		msg, _ = h.secrets.Known(msg)
	}
	tok := p.ProgressToken
	if s, ok := tok.(string); ok {
		// Switchboard's own tokens are numbers: a string is the
		// server's, delivered to no call but seen by the events.
		if out, n := h.secrets.Known(s); n > 0 {
			tok = out
		}
	}
	meta, metaChanged := h.knownMeta(p.Meta)
	if msg == p.Message && tok == p.ProgressToken && !metaChanged {
		return p
	}
	c := *p
	c.Message, c.ProgressToken, c.Meta = msg, tok, meta
	return &c
}

// knownJSON returns a decoded JSON value (a log message's data) with the
// secret values Switchboard gave servers replaced in every string of it,
// object keys included: what nothing sends back may have its keys
// rewritten. v itself when none was found; v is never modified.
func (h *Host) knownJSON(v any) any {
	out, _ := toolsurface.MapJSON(v, h.knownString)
	return out
}

// knownString is Set.Known as a toolsurface mapping function.
func (h *Host) knownString(s string) (string, bool) {
	out, n := h.secrets.Known(s)
	return out, n > 0
}

// knownExtras returns a listing's _meta and icons with the secret values
// Switchboard gave servers replaced — in _meta's keys too, and in each
// icon's source, MIME type, sizes and theme — counting in *n the listings
// that held one, and whether any did. A gateway serves both to its
// clients as the server wrote them (an icon's source is a URL a client
// fetches); neither is sent back as a name. The arguments are never
// modified.
func (h *Host) knownExtras(meta mcp.Meta, icons []mcp.Icon, n *int) (mcp.Meta, []mcp.Icon, bool) {
	meta, changed := h.knownMeta(meta)
	var out []mcp.Icon
	for i, ic := range icons {
		c, k := ic, 0
		for _, s := range []*string{&c.Source, &c.MIMEType, (*string)(&c.Theme)} {
			var m int
			*s, m = h.secrets.Known(*s)
			k += m
		}
		for j, sz := range ic.Sizes {
			if r, m := h.secrets.Known(sz); m > 0 {
				if &c.Sizes[0] == &ic.Sizes[0] {
					c.Sizes = slices.Clone(ic.Sizes)
				}
				c.Sizes[j], k = r, k+m
			}
		}
		if k == 0 {
			continue
		}
		if out == nil {
			out = slices.Clone(icons)
		}
		out[i] = c
	}
	if out != nil {
		icons, changed = out, true
	}
	if changed {
		*n++
	}
	return meta, icons, changed
}

// knownMeta is knownJSON for a notification's _meta, and whether it
// replaced any.
func (h *Host) knownMeta(m mcp.Meta) (mcp.Meta, bool) {
	if len(m) == 0 {
		return m, false
	}
	if out, changed := toolsurface.MapJSON(map[string]any(m), h.knownString); changed {
		return out.(map[string]any), true
	}
	return m, false
}

// guardQuestion returns a server's question with the secret values
// Switchboard gave servers replaced in its message, URL and every string
// value of its form: it is shown to a person, or passed on to a gateway's
// client, as a result is, and in its _meta (keys too), which a gateway
// passes on. p itself when nothing changed. ok is false when a name in
// its form (a property's, which the answer sends back) or its elicitation
// id (which the server names the question by again) holds such a value:
// as a tool with one in a name is not served, the question is not asked
// (secretnames.go).
func (h *Host) guardQuestion(p *mcp.ElicitParams) (_ *mcp.ElicitParams, ok bool) {
	if p == nil {
		return p, true
	}
	if h.holdsSecret(p.ElicitationID) || h.keysHoldSecret(p.RequestedSchema) {
		return nil, false
	}
	known := 0
	f := h.replaceKnown(&known)
	msg, _ := f(p.Message)
	u, _ := f(p.URL)
	schema, _ := toolsurface.MapJSONValues(p.RequestedSchema, f)
	meta, metaChanged := h.knownMeta(p.Meta)
	if known == 0 && !metaChanged {
		return p, true
	}
	h.log.Warn("a server's question held a secret value Switchboard gave a server; it was replaced")
	c := *p
	c.Message, c.URL, c.RequestedSchema, c.Meta = msg, u, schema, meta
	return &c, true
}

// guardResult turns a tool's result into what the model may read: cleaned
// of deceptive characters, the known secret values replaced, and the
// server's "secrets" mode applied to credentials of a known shape.
func (h *Host) guardResult(server, tool string, mode config.SecretsMode, res *mcp.CallToolResult, rep *CallReport) *mcp.CallToolResult {
	if _, forged := res.Meta[BlockedMetaKey]; forged {
		// Switchboard's mark of its own refusals: a server's result
		// carrying it would pass for one, and skip the after hooks.
		c := *res
		c.Meta = maps.Clone(res.Meta)
		delete(c.Meta, BlockedMetaKey)
		res = &c
		h.log.Warn("a result carried the _meta key of Switchboard's refusals; it was removed", "server", server, "tool", tool)
	}
	res, findings := toolsurface.CleanResult(res)
	if len(findings) > 0 {
		rep.found(findings)
		kinds := make([]string, len(findings))
		for i, f := range findings {
			kinds[i] = f.String()
		}
		h.log.Info("deceptive text in a result", "server", server, "tool", tool, "findings", strings.Join(kinds, "; "))
	}
	known := 0
	res, _ = toolsurface.MapResultText(res, h.replaceKnown(&known))
	res = h.guardBlobs(res, &known)
	res = h.guardSplit(res, &known)
	if known > 0 {
		rep.secret(fmt.Sprintf("%d known secret value(s) replaced", known))
		h.log.Warn("a result held a secret value Switchboard gave a server; it was replaced", "server", server, "tool", tool)
	}
	if mode != config.SecretsRedact && mode != config.SecretsBlock {
		return res
	}
	var shapes []string
	redacted, _ := toolsurface.MapResultText(res, func(s string) (string, bool) {
		out, names := redact.Tokens(s)
		shapes = append(shapes, names...)
		return out, len(names) > 0
	})
	if len(shapes) == 0 {
		return res
	}
	if mode == config.SecretsBlock {
		why := fmt.Sprintf("Switchboard withheld this result: it holds what looks like a %s, and server %s is set to \"secrets\": \"block\"", shapes[0], server)
		rep.secret("result blocked: it holds " + shapes[0])
		h.log.Warn("result withheld: it holds a credential", "server", server, "tool", tool, "secret", shapes[0])
		return blockedResult(why)
	}
	rep.secret("credentials replaced: " + strings.Join(shapes, ", "))
	h.log.Info("credentials in a result replaced", "server", server, "tool", tool, "secrets", strings.Join(shapes, ", "))
	return redacted
}

// runHook runs one hook on a call. It returns the result to give the
// model instead of going on (a deny, or a failure that fails closed), or
// nil to go on; after a call, an allow's redactions are applied to *res.
func (h *Host) runHook(ctx context.Context, hk config.CallHook, req *HookRequest, res **mcp.CallToolResult) *mcp.CallToolResult {
	start := time.Now()
	resp, err := h.hooks.run(ctx, hk, req)
	d := HookDecision{Hook: hk.Name, Phase: req.Phase, DurationMS: float64(time.Since(start).Microseconds()) / 1000}
	rep := reportFrom(ctx)
	what := "this call"
	if req.Phase == "after" {
		what = "this call's result"
	}
	if err != nil {
		d.Decision, d.Reason = "error", oneLine(h.secrets.String(err.Error()))
		h.log.Warn("call hook failed", "hook", hk.Name, "phase", req.Phase, "server", req.Server, "tool", req.ServerTool,
			"error", d.Reason, "fail_open", hk.FailOpen)
		if hk.FailOpen {
			rep.hook(d)
			return nil
		}
		d.Refused = true
		rep.hook(d)
		return blockedResult(fmt.Sprintf("Switchboard refused %s: the call hook %q failed (%s), and a hook that fails refuses (fail closed)", what, hk.Name, d.Reason))
	}
	// A hook may quote what it read (a server's text) in its reason, which
	// reaches the model and the audit line: cleaned as a result is, with
	// the known secrets replaced.
	reason, _ := toolsurface.CleanText(oneLine(h.secrets.String(resp.Reason)))
	d.Decision, d.Reason = resp.Decision, reason
	if resp.Decision == "deny" {
		d.Refused = true
		rep.hook(d)
		h.log.Info("call hook denied", "hook", hk.Name, "phase", req.Phase, "server", req.Server, "tool", req.ServerTool, "reason", d.Reason)
		msg := fmt.Sprintf("The call hook %q denied %s", hk.Name, what)
		if req.Phase == "after" {
			msg = fmt.Sprintf("The call hook %q withheld %s", hk.Name, what)
		}
		if d.Reason != "" {
			msg += ": " + d.Reason
		}
		return blockedResult(msg)
	}
	if res != nil && len(resp.Redact) > 0 {
		n := 0
		*res, _ = toolsurface.MapResultText(*res, func(s string) (string, bool) {
			out := s
			for _, r := range resp.Redact {
				if r != "" && strings.Contains(out, r) {
					out = strings.ReplaceAll(out, r, redact.Placeholder)
					n++
				}
			}
			return out, out != s
		})
		if n > 0 {
			d.Decision = "redact"
		}
	}
	rep.hook(d)
	h.log.Debug("call hook allowed", "hook", hk.Name, "phase", req.Phase, "server", req.Server, "tool", req.ServerTool)
	return nil
}

// cleanPrompts cleans the prompts' titles and descriptions
// (toolsurface.CleanPrompt) and notes, per server, what was found.
func (h *Host) cleanPrompts(prompts []Prompt) []Prompt {
	found := map[string][]ToolFindings{}
	seen := map[string]bool{}
	known := 0
	for i, p := range prompts {
		seen[p.Server] = true
		c, f := toolsurface.CleanPrompt(p.Prompt)
		// The model reads a prompt's words as a tool's: the secret
		// values Switchboard gave servers are replaced.
		c, _ = toolsurface.MapPromptText(c, h.replaceKnown(&known))
		if meta, icons, ok := h.knownExtras(c.Meta, c.Icons, &known); ok {
			cc := *c
			cc.Meta, cc.Icons = meta, icons
			c = &cc
		}
		prompts[i].Prompt = c
		if len(f) == 0 {
			continue
		}
		found[p.Server] = append(found[p.Server], ToolFindings{Tool: "prompt " + p.Prompt.Name, Findings: f})
	}
	if known > 0 {
		h.log.Warn("a prompt's description held a secret value Switchboard gave a server; it was replaced")
	}
	for server := range seen {
		h.notePromptFindings(server, found[server])
	}
	return prompts
}

// cleanPromptResult cleans a rendered prompt's text and replaces the
// secret values it holds, in its text, its messages' binary data and its
// _meta.
func (h *Host) cleanPromptResult(server, prompt string, res *mcp.GetPromptResult) *mcp.GetPromptResult {
	c, f := toolsurface.CleanPromptResult(res)
	if len(f) > 0 {
		kinds := make([]string, len(f))
		for i, x := range f {
			kinds[i] = x.String()
		}
		h.log.Info("deceptive text in a prompt", "server", server, "prompt", prompt, "findings", strings.Join(kinds, "; "))
	}
	// A rendered prompt is text the model reads, as a tool's result is:
	// the secret values Switchboard gave a server are replaced.
	known := 0
	c, _ = toolsurface.MapPromptResultText(c, h.replaceKnown(&known))
	if c == nil {
		return nil // a failed render
	}
	// As in a result: the bytes of a message's image, audio or blob, and
	// the _meta a gateway passes on.
	var msgs []*mcp.PromptMessage
	for i, m := range c.Messages {
		if m == nil {
			continue
		}
		one := &mcp.CallToolResult{Content: []mcp.Content{m.Content}}
		if out := h.guardBlobs(one, &known); out != one {
			if msgs == nil {
				msgs = slices.Clone(c.Messages)
			}
			cm := *m
			cm.Content = out.Content[0]
			msgs[i] = &cm
		}
	}
	meta, metaChanged := h.knownMeta(c.Meta)
	if msgs != nil || metaChanged {
		cc := *c
		if msgs != nil {
			cc.Messages = msgs
		}
		cc.Meta = meta
		c, known = &cc, known+1
	}
	if known > 0 {
		h.log.Warn("a rendered prompt held a secret value Switchboard gave a server; it was replaced", "server", server, "prompt", prompt)
	}
	return c
}
