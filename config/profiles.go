package config

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/tailscale/hujson"
)

// Profile is a named view of the configuration (a settings document's
// "profiles" object): the servers it includes and the tools and calls it
// allows. A profile can only narrow: it hides servers and tools and adds
// deny/ask rules on top of the global ones, never an allow rule.
type Profile struct {
	Name string
	// Position is where the profile's name is written; Scope the layer.
	Position Position
	Scope    SettingsScope
	// Servers are server names or globs; nil includes every server.
	Servers []string
	// Extends names profiles this one narrows further: a server must be
	// included by each of them too, and their tool filters and rules apply.
	Extends []string
	// Tools filters the tools of the included servers (one layer per
	// profile, its own first, then those it extends).
	Tools ToolFilter
	// Deny and Ask are permission rules added to the global ones.
	Deny, Ask []string
	// Defer and NoDefer are the profile's own deferral modifiers (tool
	// patterns as in --tools' Defer(…) and NoDefer(…): mcp__<server>,
	// mcp__<server>__<tool>, mcp__<server>__* or mcp__*), as written in
	// its definition.
	Defer, NoDefer []string
	// Deferral is what decides, for a view of the profile, which tools are
	// deferred: one layer per profile, its own first, then those of the
	// profiles it extends (in "extends" order, each followed by those it
	// extends). The first layer that speaks for a tool decides it (noDefer
	// beats defer within a layer), so a profile's own choice of what is
	// shown up front is never overridden by one it extends: extending
	// narrows what may be called, not how it is presented. A view applies
	// them after the session's --tools and before defer_loading.
	Deferral []DeferLayer
	// serverSets are Servers of this profile and every one it extends,
	// after resolution: a server is included when each set matches it.
	serverSets [][]string
	// dropped marks a definition an error dropped (only Name, Position
	// and Scope are set): what "extends" of it says it was.
	dropped bool
}

// DeferLayer is one profile's "defer" and "noDefer" (see [Profile.Deferral]).
type DeferLayer struct {
	// Profile is the name of the profile that wrote them.
	Profile        string
	Defer, NoDefer []string
}

// ValidProfileName reports whether name is a legal profile name: 1 to 64
// letters, digits, '_' and '-'. Unlike a server name, no '.': a profile's
// name is a path segment (/mcp/<profile>) and part of a client's entry
// name, where "." and ".." would name something else.
func ValidProfileName(name string) bool {
	return ValidName(name) && !strings.Contains(name, ".")
}

// IncludesServer reports whether the profile includes the server named name.
func (p Profile) IncludesServer(name string) bool {
	sets := p.serverSets
	if sets == nil && p.Servers != nil {
		sets = [][]string{p.Servers}
	}
	for _, set := range sets {
		if set == nil {
			continue
		}
		if !slices.ContainsFunc(set, func(g string) bool { return GlobMatch(g, name) }) {
			return false
		}
	}
	return true
}

// profileFields are the keys a profile may have.
var profileFields = []string{"servers", "extends", "enabledTools", "disabledTools", "defer", "noDefer", "permissions", "description"}

// ParseProfiles reads the "profiles" object of the settings document data
// (JSONC) written by scope, and, when workspace is not "", the "profiles"
// of the "projects" entries for it (as local settings). Problems name
// file:line:col. A repository (SettingsProject) may define profiles, but
// none with an allow rule.
func ParseProfiles(file string, data []byte, scope SettingsScope, workspace string) ([]Profile, []Diagnostic) {
	out, diags := parseProfiles(file, data, scope, workspace)
	return slices.DeleteFunc(out, func(p Profile) bool { return p.dropped }), diags
}

// parseProfiles is ParseProfiles, with a dropped stub for each definition
// an error dropped.
func parseProfiles(file string, data []byte, scope SettingsScope, workspace string) ([]Profile, []Diagnostic) {
	text, _ := StripBOM(data)
	doc, diags := parseJSONC(file, text)
	if len(diags) > 0 || doc.obj == nil {
		return nil, diags
	}
	out, diags := doc.profiles(doc.obj, scope)
	if workspace == "" {
		return out, diags
	}
	pm := lookupMember(doc.obj, "projects")
	if pm == nil {
		return out, diags
	}
	po, ok := pm.Value.Value.(*hujson.Object)
	if !ok {
		return out, diags
	}
	for _, k := range MatchProjectKeys(memberNames(po), workspace) {
		if eo, ok := lookupMember(po, k).Value.Value.(*hujson.Object); ok {
			p, d := doc.profiles(eo, SettingsLocal)
			out, diags = append(out, p...), append(diags, d...)
		}
	}
	return out, diags
}

func (d *jsoncDoc) profiles(obj *hujson.Object, scope SettingsScope) ([]Profile, []Diagnostic) {
	var diags []Diagnostic
	m := lookupMember(obj, "profiles")
	if m == nil || isNull(&m.Value) {
		return nil, nil
	}
	po, ok := m.Value.Value.(*hujson.Object)
	if !ok {
		return nil, []Diagnostic{{Severity: SeverityError, Position: d.pos(m.Value.StartOffset), Field: "profiles",
			Message: "must be an object keyed by profile name, not " + kindName(&m.Value),
			Fix:     `write "profiles": { "review": { "servers": ["github"] } }`}}
	}
	var out []Profile
	seen := map[string]Position{}
	// twice are the names defined more than once: none of their
	// definitions is used (which one was meant is not known).
	twice := map[string]bool{}
	for i := range po.Members {
		pm := &po.Members[i]
		name := memberName(pm)
		at := d.pos(pm.Name.StartOffset)
		field := "profiles." + name
		if !ValidProfileName(name) {
			diags = append(diags, Diagnostic{Severity: SeverityError, Position: at, Field: field,
				Message: "a profile name may hold only letters, digits, '_' and '-'", Fix: fmt.Sprintf("rename it, e.g. %q", strings.ReplaceAll(suggestName(name), ".", "-"))})
			continue
		}
		if first, dup := seen[name]; dup {
			diags = append(diags, Diagnostic{Severity: SeverityError, Position: at, Field: field,
				Message: "profile defined twice (first at " + first.String() + "); neither definition is used", Fix: "keep one definition"})
			twice[name] = true
			continue
		}
		seen[name] = at
		fo, ok := pm.Value.Value.(*hujson.Object)
		if !ok {
			diags = append(diags, Diagnostic{Severity: SeverityError, Position: d.pos(pm.Value.StartOffset), Field: field,
				Message: "must be an object, not " + kindName(&pm.Value), Fix: `write { "servers": ["github"], "disabledTools": ["*write*"] }`})
			out = append(out, Profile{Name: name, Position: at, Scope: scope, dropped: true})
			continue
		}
		p := Profile{Name: name, Position: at, Scope: scope}
		layer := ToolLayer{Where: fmt.Sprintf("profile %q (%s)", name, at)}
		bad := false
		for j := range fo.Members {
			fm := &fo.Members[j]
			key := memberName(fm)
			kf := field + "." + key
			switch key {
			case "servers":
				p.Servers = d.stringArray(&fm.Value, "", kf, &diags)
				if p.Servers == nil {
					p.Servers = []string{}
				}
				if len(p.Servers) == 0 {
					bad = true
					diags = append(diags, Diagnostic{Severity: SeverityError, Position: d.pos(fm.Value.StartOffset), Field: kf,
						Message: "an empty server list includes nothing", Fix: `name servers or globs, e.g. ["github", "docs-*"], or drop "servers" to include all`})
				}
			case "extends":
				p.Extends = d.stringArray(&fm.Value, "", kf, &diags)
			case "enabledTools":
				layer.Enabled = d.globList(&fm.Value, "", kf, &diags)
				if arr, ok := fm.Value.Value.(*hujson.Array); ok && len(arr.Elements) == 0 {
					bad = true
					diags = append(diags, Diagnostic{Severity: SeverityError, Position: d.pos(fm.Value.StartOffset), Field: kf,
						Message: "an empty enabledTools list would hide every tool", Fix: `name the tools to show, or drop "enabledTools"`})
				}
			case "disabledTools":
				layer.Disabled = d.globList(&fm.Value, "", kf, &diags)
				for k, g := range layer.Disabled {
					if strings.Trim(g, "*") == "" {
						bad = true
						arr := fm.Value.Value.(*hujson.Array)
						diags = append(diags, Diagnostic{Severity: SeverityError, Position: d.pos(arr.Elements[min(k, len(arr.Elements)-1)].StartOffset), Field: kf,
							Message: fmt.Sprintf("%q hides every tool, leaving the profile empty", g), Fix: "hide only some tools, e.g. \"*write*\""})
					}
				}
			case "defer", "noDefer":
				list := d.stringArray(&fm.Value, "", kf, &diags)
				arr, ok := fm.Value.Value.(*hujson.Array)
				bad = bad || !ok
				for k, pat := range list {
					if msg := toolPatternProblem(pat); msg != "" {
						bad = true
						diags = append(diags, Diagnostic{Severity: SeverityError, Position: d.pos(arr.Elements[min(k, len(arr.Elements)-1)].StartOffset), Field: kf,
							Message: msg, Fix: `write mcp__<server>, mcp__<server>__<tool>, mcp__<server>__* or mcp__*`})
					}
				}
				if key == "defer" {
					p.Defer = list
				} else {
					p.NoDefer = list
				}
			case "permissions":
				perm, ok := fm.Value.Value.(*hujson.Object)
				if !ok {
					diags = append(diags, Diagnostic{Severity: SeverityError, Position: d.pos(fm.Value.StartOffset), Field: kf,
						Message: "must be an object, not " + kindName(&fm.Value), Fix: `write "permissions": { "deny": ["mcp__github__*"] }`})
					continue
				}
				for k := range perm.Members {
					rm := &perm.Members[k]
					switch rk := memberName(rm); rk {
					case "deny":
						p.Deny = d.stringArray(&rm.Value, "", kf+".deny", &diags)
					case "ask":
						p.Ask = d.stringArray(&rm.Value, "", kf+".ask", &diags)
					case "allow":
						bad = true
						diags = append(diags, Diagnostic{Severity: SeverityError, Position: d.pos(rm.Name.StartOffset), Field: kf + ".allow",
							Message: "a profile can only tighten the permission rules; an allow rule would widen them",
							Fix:     `move the rule to the top-level "permissions" of user settings, or use "deny"/"ask" here`})
					default:
						diags = append(diags, Diagnostic{Severity: SeverityWarning, Position: d.pos(rm.Name.StartOffset), Field: kf + "." + rk,
							Message: "unknown field; it is ignored", Fix: `use "deny" or "ask"`})
					}
				}
			case "description":
			default:
				diags = append(diags, Diagnostic{Severity: SeverityWarning, Position: d.pos(fm.Name.StartOffset), Field: kf,
					Message: "unknown field; it is ignored", Fix: "use one of " + strings.Join(profileFields, ", ")})
			}
		}
		if bad {
			out = append(out, Profile{Name: name, Position: at, Scope: scope, dropped: true})
			continue
		}
		if len(layer.Enabled) > 0 || len(layer.Disabled) > 0 {
			p.Tools = ToolFilter{layer}
		}
		out = append(out, p)
	}
	if len(twice) > 0 {
		for i := range out {
			if twice[out[i].Name] {
				out[i] = Profile{Name: out[i].Name, Position: out[i].Position, Scope: out[i].Scope, dropped: true}
			}
		}
	}
	return out, diags
}

// Profiles is the profiles of a run, by name, resolved (extends followed).
type Profiles map[string]Profile

// MergeProfiles joins the profiles of the settings layers (each as
// [ParseProfiles] returned them) and follows "extends". A name defined in
// two layers (or in a file and one of its "projects" entries) is an error
// and every definition of it is dropped, except that the managed
// settings' definition wins over one of the flag, user or local settings
// (that one is ignored, with a warning), and a repository's profile may
// not redefine one of a trusted layer at all (it would widen it): it is
// refused and the trusted one kept. A cycle of "extends", or
// extending an unknown or dropped profile, is an error and the profiles in
// it are dropped.
func MergeProfiles(layers ...[]Profile) (Profiles, []Diagnostic) {
	var diags []Diagnostic
	all := Profiles{}
	// twice are the names two trusted layers (or two of the repository's)
	// define, with where the first definition is.
	twice := map[string]Position{}
	// dropped are the names whose definitions an error dropped (see
	// parseProfiles), with where the first is: "extends" of one says so.
	dropped := map[string]Position{}
	// managed are the names the managed settings define (a definition an
	// error dropped too: the name stays the administrator's), with where:
	// they win over a definition of any other trusted layer, which is
	// ignored, so that no one can drop an administrator's profile by
	// defining its name.
	managed := map[string]Position{}
	for _, layer := range layers {
		for _, p := range layer {
			if _, ok := managed[p.Name]; !ok && p.Scope == SettingsManaged {
				managed[p.Name] = p.Position
			}
		}
	}
	for _, layer := range layers {
		for _, p := range layer {
			if at, ok := managed[p.Name]; ok && p.Scope != SettingsManaged && p.Scope.Trusted() {
				diags = append(diags, Diagnostic{Severity: SeverityWarning, Position: p.Position, Field: "profiles." + p.Name,
					Message: fmt.Sprintf("profile %q is defined by the managed settings (%s), which win: this %s definition is ignored", p.Name, at, p.Scope),
					Fix:     fmt.Sprintf(`give yours another name (it may "extends": [%q] to narrow the managed one)`, p.Name)})
				continue
			}
			if p.dropped {
				if _, ok := dropped[p.Name]; !ok {
					dropped[p.Name] = p.Position
				}
				continue
			}
			prev, dup := all[p.Name]
			switch {
			case !dup:
				all[p.Name] = p
			case p.Scope == SettingsProject && prev.Scope.Trusted():
				diags = append(diags, Diagnostic{Severity: SeverityError, Position: p.Position, Field: "profiles." + p.Name,
					Message: fmt.Sprintf("a repository may not redefine profile %q of %s settings (%s): it could widen it", p.Name, prev.Scope, prev.Position),
					Fix:     fmt.Sprintf(`give it another name with "extends": [%q] to narrow it`, p.Name)})
			case prev.Scope == SettingsProject && p.Scope.Trusted():
				diags = append(diags, Diagnostic{Severity: SeverityError, Position: prev.Position, Field: "profiles." + p.Name,
					Message: fmt.Sprintf("a repository may not redefine profile %q of %s settings (%s): it could widen it", p.Name, p.Scope, p.Position),
					Fix:     fmt.Sprintf(`give it another name with "extends": [%q] to narrow it`, p.Name)})
				all[p.Name] = p
			default:
				diags = append(diags, Diagnostic{Severity: SeverityError, Position: p.Position, Field: "profiles." + p.Name,
					Message: "profile defined twice (also at " + prev.Position.String() + "); neither definition is used", Fix: "rename or remove one definition"})
				if _, ok := twice[p.Name]; !ok {
					twice[p.Name] = prev.Position
				}
			}
		}
	}
	for name := range twice {
		delete(all, name)
	}
	out := Profiles{}
	const (
		visiting = 1
		done     = 2
	)
	state := map[string]int{}
	var resolve func(name string, chain []string) (Profile, bool)
	resolve = func(name string, chain []string) (Profile, bool) {
		p := all[name]
		switch state[name] {
		case done:
			r, ok := out[name]
			return r, ok
		case visiting:
			return p, false
		}
		state[name] = visiting
		r := p
		r.serverSets = [][]string{p.Servers}
		r.Tools = slices.Clone(p.Tools)
		r.Deferral = nil
		if len(p.Defer) > 0 || len(p.NoDefer) > 0 {
			r.Deferral = []DeferLayer{{Profile: name, Defer: p.Defer, NoDefer: p.NoDefer}}
		}
		ok := true
		for _, e := range p.Extends {
			if first, dropped := twice[e]; dropped {
				ok = false
				diags = append(diags, Diagnostic{Severity: SeverityError, Position: p.Position, Field: "profiles." + name + ".extends",
					Message: fmt.Sprintf("extends profile %q, which is defined twice (first at %s) and so dropped", e, first),
					Fix:     "keep one definition of " + strconv.Quote(e)})
				continue
			}
			if at, wasDropped := dropped[e]; wasDropped && all[e].Name == "" {
				ok = false
				diags = append(diags, Diagnostic{Severity: SeverityError, Position: p.Position, Field: "profiles." + name + ".extends",
					Message: fmt.Sprintf("extends profile %q, which an error in its definition (%s) dropped", e, at),
					Fix:     "fix the error of profile " + strconv.Quote(e)})
				continue
			}
			if _, exists := all[e]; !exists {
				ok = false
				diags = append(diags, Diagnostic{Severity: SeverityError, Position: p.Position, Field: "profiles." + name + ".extends",
					Message: fmt.Sprintf("extends unknown profile %q", e), Fix: "define it, or remove it from extends" + suggestProfile(e, all)})
				continue
			}
			if state[e] == visiting {
				ok = false
				diags = append(diags, Diagnostic{Severity: SeverityError, Position: p.Position, Field: "profiles." + name + ".extends",
					Message: fmt.Sprintf("extends form a cycle: %s → %s", strings.Join(append(chain, name), " → "), e),
					Fix:     "remove one of the extends"})
				continue
			}
			b, bok := resolve(e, append(chain, name))
			if !bok {
				ok = false
				continue
			}
			r.serverSets = append(r.serverSets, b.serverSets...)
			r.Tools = append(r.Tools, b.Tools...)
			r.Deny = append(slices.Clone(r.Deny), b.Deny...)
			r.Ask = append(slices.Clone(r.Ask), b.Ask...)
			// Presentation is the profile's own first (Deferral); what may
			// be shown and called only narrows (the lines above).
			r.Deferral = append(slices.Clone(r.Deferral), b.Deferral...)
		}
		state[name] = done
		if ok {
			out[name] = r
		}
		return r, ok
	}
	for _, name := range sortedKeys(all) {
		resolve(name, nil)
	}
	return out, diags
}

// DroppedProfile returns the error of diags (the problems [MergeProfiles]
// or [SettingsStack.Profiles] returned) that names the profile called name
// or one of its fields: why settings that define it have it dropped. nil
// when there is none (the name is defined nowhere).
func DroppedProfile(name string, diags []Diagnostic) *Diagnostic {
	field := "profiles." + name
	for i, d := range diags {
		if d.Severity == SeverityError && (d.Field == field || strings.HasPrefix(d.Field, field+".")) {
			return &diags[i]
		}
	}
	return nil
}

// Names returns the profile names in order.
func (ps Profiles) Names() []string { return sortedKeys(ps) }

// Including returns the names of the profiles that include server, in order.
func (ps Profiles) Including(server string) []string {
	var out []string
	for _, n := range ps.Names() {
		if ps[n].IncludesServer(server) {
			out = append(out, n)
		}
	}
	return out
}

// Check reports, for doctor, each profile's server entry that names no
// server of servers or is a glob matching none. An entry within two edits
// of a configured name is an error with that name suggested (a typo);
// any other is a warning: a profile in user settings may well name
// another workspace's project servers, which are not configured here.
func (ps Profiles) Check(servers []string) []Diagnostic {
	var diags []Diagnostic
	for _, n := range ps.Names() {
		p := ps[n]
		for _, s := range p.Servers {
			if slices.ContainsFunc(servers, func(name string) bool { return GlobMatch(s, name) }) {
				continue
			}
			what, fix := fmt.Sprintf("names server %q, which is not configured here", s), "nothing to do if it is another workspace's server; else define it, or remove it from the profile"
			if strings.ContainsAny(s, "*?[") {
				what = fmt.Sprintf("pattern %q matches no server configured here", s)
			}
			sev := SeverityWarning
			if near := nearestName(s, servers); near != "" {
				fix, sev = fmt.Sprintf("did you mean %q?", near), SeverityError
			}
			diags = append(diags, Diagnostic{Severity: sev, Position: p.Position, Field: "profiles." + n + ".servers",
				Message: "profile " + what, Fix: fix})
		}
	}
	return diags
}

func suggestProfile(name string, all Profiles) string {
	if n := nearestName(name, sortedKeys(all)); n != "" {
		return fmt.Sprintf(" (did you mean %q?)", n)
	}
	return ""
}

// nearestName returns the name of names within two edits of s, or "".
func nearestName(s string, names []string) string {
	best, bestDist := "", 3
	for _, n := range names {
		if d := editDistance(strings.ToLower(s), strings.ToLower(n)); d < bestDist {
			best, bestDist = n, d
		}
	}
	return best
}

// toolPatternProblem says what is wrong with s as a tool pattern of a
// deferral modifier ("" if nothing): the grammar of toolsurface's
// ParsePattern, which config may not import (it reaches net/http).
func toolPatternProblem(s string) string {
	why := ""
	rest, ok := strings.CutPrefix(strings.ToLower(s), "mcp__")
	server, tool, hasTool := strings.Cut(rest, "__")
	switch {
	case !ok:
		why = "not an MCP tool pattern"
	case rest == "*":
	case server == "" || server[0] == '_' || server[len(server)-1] == '_':
		why = "no server name, or one that starts or ends with '_'"
	case hasTool && tool == "":
		why = "ends in __ without a tool"
	case strings.ContainsFunc(server+strings.TrimSuffix("_"+tool, "_*"), func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_' || r == '-' || r == '.')
	}):
		why = "* may only replace a whole last segment, and names hold only letters, digits, '_', '-' and '.'"
	}
	if why == "" {
		return ""
	}
	return fmt.Sprintf("%q: %s", s, why)
}
