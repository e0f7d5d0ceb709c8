package policy

import "strings"

// Lists are the allow, ask and deny lists of one set of rules.
type Lists struct {
	Allow, Ask, Deny []string
}

// groupPrefix names a group's entry among a Scoped's keys.
const groupPrefix = "group:"

// Scoped holds permission rules scoped to the principals and groups of a
// team gateway (docs/gateway.md, Principal rules): keyed by principal
// name, or "group:<name>"
// for every member of a group. Its rules add to those of the settings
// files (Policy.With), so a deny anywhere still wins, then ask, then
// allow. A nil *Scoped holds no rules. It is immutable and safe for
// concurrent use.
type Scoped struct {
	rules map[string][]Rule
}

// NewScoped parses the lists of every principal and group. Each rule's
// Source is src with its Principal set to the entry's key.
func NewScoped(src Source, lists map[string]Lists) *Scoped {
	s := &Scoped{rules: map[string][]Rule{}}
	for name, l := range lists {
		rs := src
		rs.Scope, rs.Principal = ScopePrincipal, name
		if rules := RulesFrom(rs, l.Allow, l.Ask, l.Deny); len(rules) > 0 {
			s.rules[name] = rules
		}
	}
	return s
}

// For returns the rules that apply to a principal's calls: its own and
// those of each of its groups. Group names are matched exactly; a
// principal named "group:…" has no rules of its own.
func (s *Scoped) For(principal string, groups []string) []Rule {
	if s == nil || len(s.rules) == 0 {
		return nil
	}
	var out []Rule
	if !strings.HasPrefix(principal, groupPrefix) {
		out = append(out, s.rules[principal]...)
	}
	for _, g := range groups {
		out = append(out, s.rules[groupPrefix+g]...)
	}
	return out
}

// Empty reports whether s holds no rule.
func (s *Scoped) Empty() bool { return s == nil || len(s.rules) == 0 }
