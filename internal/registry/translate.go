package registry

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// ErrUnsupported is returned (wrapped) for a package or remote Switchboard
// cannot run as written: a package type without a known runner (mcpb,
// cargo), a runtime hint it does not know, a package that serves HTTP
// itself.
var ErrUnsupported = errors.New("not supported")

// Selection says which of a server.json's packages and remotes to install.
// The zero value takes the first package Switchboard can run, else the
// first remote.
type Selection struct {
	// Kind is "package", "remote" or "" (either, packages first).
	Kind string
	// RegistryType picks a package by its type (npm, pypi, oci, nuget).
	RegistryType string
	// Transport picks a remote by its type (streamable-http or sse).
	Transport string
}

// Var is one value a user may give for a server: an environment variable,
// a header, an argument or a {variable} inside one of those or a remote's
// URL.
type Var struct {
	// Key is the name the value is given under (mcp add -e KEY=VALUE): the
	// environment variable's or header's name, a {variable}'s name, an
	// argument's valueHint (or its flag without dashes).
	Key         string
	Where       string // e.g. `environment variable BRAVE_API_KEY`, `header Authorization`
	Description string
	Default     string
	Placeholder string
	Choices     []string
	Format      string
	Required    bool
	Secret      bool
	// Ref is the environment variable a secret is read from when it is
	// kept out of the file: the definition holds ${Ref}.
	Ref string
}

// Plan is what installing one package or remote of a server involves.
type Plan struct {
	Server *ServerJSON
	// Exactly one of Package and Remote is set.
	Package *Package
	Remote  *Transport
	// Inputs are the values the user may give, required ones first, each
	// key once.
	Inputs []Var
}

// NewPlan picks what to install from s and lists its inputs.
func NewPlan(s *ServerJSON, sel Selection) (*Plan, error) {
	p := &Plan{Server: s}
	var why []string
	if sel.Kind != "remote" && sel.Transport == "" {
		for i := range s.Packages {
			pkg := &s.Packages[i]
			if sel.RegistryType != "" && !strings.EqualFold(pkg.RegistryType, sel.RegistryType) {
				continue
			}
			if err := runnable(pkg); err != nil {
				why = append(why, strings.TrimSuffix(err.Error(), ": "+ErrUnsupported.Error()))
				continue
			}
			p.Package = pkg
			break
		}
	}
	if p.Package == nil && sel.Kind != "package" && sel.RegistryType == "" {
		for i := range s.Remotes {
			r := &s.Remotes[i]
			if sel.Transport != "" && !strings.EqualFold(r.Type, sel.Transport) {
				continue
			}
			if _, err := remoteType(r.Type); err != nil {
				why = append(why, strings.TrimSuffix(err.Error(), ": "+ErrUnsupported.Error()))
				continue
			}
			p.Remote = r
			break
		}
	}
	if p.Package == nil && p.Remote == nil {
		what := "package or remote"
		switch {
		case sel.RegistryType != "":
			what = sel.RegistryType + " package"
		case sel.Transport != "":
			what = sel.Transport + " remote"
		case sel.Kind != "":
			what = sel.Kind
		}
		msg := fmt.Sprintf("%s has no %s that Switchboard can run", s.Name, what)
		if len(why) > 0 {
			msg += " (" + strings.Join(why, "; ") + ")"
		}
		return nil, fmt.Errorf("%s: %w", msg, ErrUnsupported)
	}
	p.Inputs = p.inputs()
	return p, nil
}

// Source says what the plan installs, e.g. "npm package
// @modelcontextprotocol/server-everything 2026.8.31" or "streamable-http
// remote https://…".
func (p *Plan) Source() string {
	if p.Package != nil {
		s := fmt.Sprintf("%s package %s", p.Package.RegistryType, p.Package.Identifier)
		if p.Package.Version != "" {
			s += " " + p.Package.Version
		}
		return s
	}
	return fmt.Sprintf("%s remote %s", p.Remote.Type, p.Remote.URL)
}

// runnable says why pkg cannot be run by a stdio definition (nil: it can).
func runnable(pkg *Package) error {
	if t := pkg.Transport.Type; t != "" && t != "stdio" {
		return fmt.Errorf("the %s package %s serves %s itself (start it yourself, then add its URL)", pkg.RegistryType, pkg.Identifier, t)
	}
	if _, err := runtimeFor(pkg); err != nil {
		return err
	}
	if why := packageSpec(pkg); why != "" {
		return fmt.Errorf("%s: %w", why, ErrUnsupported)
	}
	return nil
}

// runtimes are the commands each package type may be started with; the
// first is the default. A server.json is written by whoever publishes it:
// its runtimeHint names the program Switchboard will run, so only the
// known runners are taken.
var runtimes = map[string][]string{
	"npm":   {"npx", "bunx", "pnpx"},
	"pypi":  {"uvx", "pipx"},
	"oci":   {"docker", "podman"},
	"nuget": {"dnx"},
}

func runtimeFor(pkg *Package) (string, error) {
	known, ok := runtimes[strings.ToLower(pkg.RegistryType)]
	if !ok {
		return "", fmt.Errorf("%s packages (%s) have no runner in Switchboard: %w", pkg.RegistryType, pkg.Identifier, ErrUnsupported)
	}
	if pkg.Identifier == "" || strings.HasPrefix(pkg.Identifier, "-") {
		return "", fmt.Errorf("%s package identifier %q: %w", pkg.RegistryType, pkg.Identifier, ErrUnsupported)
	}
	if pkg.RuntimeHint == "" {
		return known[0], nil
	}
	for _, k := range known {
		if pkg.RuntimeHint == k {
			return k, nil
		}
	}
	return "", fmt.Errorf("runtimeHint %q for a %s package is not one of %s: %w", pkg.RuntimeHint, pkg.RegistryType, strings.Join(known, ", "), ErrUnsupported)
}

func remoteType(t string) (string, error) {
	switch strings.ToLower(t) {
	case "streamable-http", "streamable_http", "http":
		return "http", nil
	case "sse":
		return "sse", nil
	}
	return "", fmt.Errorf("remote transport %q: %w", t, ErrUnsupported)
}

// inputs walks the plan's environment, arguments, headers and URL.
func (p *Plan) inputs() []Var {
	var c collector
	if pkg := p.Package; pkg != nil {
		for _, a := range pkg.RuntimeArguments {
			c.argument(a)
		}
		for _, a := range pkg.PackageArguments {
			c.argument(a)
		}
		for _, e := range pkg.EnvironmentVariables {
			c.keyValue(e, "environment variable")
		}
	} else {
		r := p.Remote
		c.template(r.URL, r.Variables, false, "URL variable")
		for _, h := range r.Headers {
			c.keyValue(h, "header")
		}
	}
	sort.SliceStable(c.vars, func(i, j int) bool { return c.vars[i].Required && !c.vars[j].Required })
	return c.vars
}

type collector struct{ vars []Var }

func (c *collector) add(v Var) {
	for i := range c.vars {
		if c.vars[i].Key == v.Key {
			c.vars[i].Required = c.vars[i].Required || v.Required
			c.vars[i].Secret = c.vars[i].Secret || v.Secret
			return
		}
	}
	if v.Ref == "" {
		v.Ref = EnvName(v.Key)
	}
	c.vars = append(c.vars, v)
}

func (c *collector) keyValue(kv KeyValueInput, where string) {
	if kv.Value != "" {
		c.template(kv.Value, kv.Variables, kv.IsSecret, where+" "+kv.Name)
		return
	}
	c.add(varOf(kv.Name, where+" "+kv.Name, kv.Input, false))
}

func (c *collector) argument(a Argument) {
	if a.Value != "" {
		c.template(a.Value, a.Variables, a.IsSecret, "argument "+argLabel(a))
		return
	}
	if a.Type == "named" && !a.IsRequired && a.Default == "" {
		// A flag without a value may be a switch: it is given only when
		// the user asks for it (a value "true" turns it on).
	}
	c.add(varOf(argKey(a), "argument "+argLabel(a), a.Input, false))
}

// template adds the {variables} value refers to.
func (c *collector) template(value string, vars map[string]Input, secret bool, where string) {
	for _, name := range placeholders(value, vars) {
		c.add(varOf(name, where+" ({"+name+"})", vars[name], secret))
	}
}

func varOf(key, where string, in Input, secret bool) Var {
	return Var{
		Key: key, Where: where, Description: in.Description, Default: in.Default,
		Placeholder: in.Placeholder, Choices: in.Choices, Format: in.Format,
		Required: in.IsRequired, Secret: in.IsSecret || secret,
	}
}

func argKey(a Argument) string {
	if a.ValueHint != "" {
		return a.ValueHint
	}
	if k := strings.TrimLeft(a.Name, "-"); k != "" {
		return k
	}
	return "argument"
}

func argLabel(a Argument) string {
	if a.Type == "named" && a.Name != "" {
		return a.Name
	}
	if a.ValueHint != "" {
		return "<" + a.ValueHint + ">"
	}
	return "(positional)"
}

// placeholders returns, in order of first use, the names of vars that
// value refers to as {name}. Braces naming no variable are plain text.
func placeholders(value string, vars map[string]Input) []string {
	var out []string
	seen := map[string]bool{}
	for rest := value; ; {
		i := strings.IndexByte(rest, '{')
		if i < 0 {
			return out
		}
		j := strings.IndexByte(rest[i:], '}')
		if j < 0 {
			return out
		}
		name := rest[i+1 : i+j]
		if _, ok := vars[name]; ok && !seen[name] {
			seen[name] = true
			out = append(out, name)
		}
		rest = rest[i+j+1:]
	}
}

// EnvName is the environment variable a key's secret is read from: the key
// upper-cased, anything outside [A-Z0-9_] as "_", with a leading "_" when
// it would start with a digit (Switchboard expands only [A-Z_][A-Z0-9_]*).
func EnvName(key string) string {
	var b strings.Builder
	for _, r := range strings.ToUpper(key) {
		if r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	s := b.String()
	if s == "" || s[0] >= '0' && s[0] <= '9' {
		s = "_" + s
	}
	return s
}

// Definition is a Switchboard server definition (the object under
// "mcpServers"), in the fields a registry server needs.
type Definition struct {
	Type    string            `json:"type"`
	Command string            `json:"command,omitempty"`
	Args    []string          `json:"args,omitempty"`
	Env     map[string]string `json:"env,omitempty"`
	URL     string            `json:"url,omitempty"`
	Headers map[string]string `json:"headers,omitempty"`
	// RuntimeArgs are the words of Args that the server.json's
	// runtimeArguments gave the runner (not written: Args holds them);
	// see Plan.ReviewDefinition.
	RuntimeArgs []string `json:"-"`
}

// BuildOptions are the user's answers; a nil *BuildOptions gives none.
type BuildOptions struct {
	// Values are the user's values by Var.Key, used as given (a value may
	// hold ${VAR} for Switchboard to expand at start).
	Values map[string]string
	// SecretRefs keeps every secret out of the definition: a secret is
	// written as ${Ref}, read from the environment when the server starts,
	// whatever value was given (for files a repository shares).
	SecretRefs bool
	// Stored maps the keys (Var.Key) of secrets the user keeps in their
	// secret store to the secret's name there: with SecretRefs such a
	// secret is written as ${secret:NAME}, read from that store when the
	// server starts.
	Stored map[string]string
}

// MissingError lists the required values Build was not given.
type MissingError struct{ Vars []Var }

func (e *MissingError) Error() string {
	keys := make([]string, len(e.Vars))
	for i, v := range e.Vars {
		keys[i] = v.Key
	}
	return "missing required values: " + strings.Join(keys, ", ")
}

// Build turns the plan into a definition. Text the server.json supplies
// (fixed values, defaults) is escaped ("${" as "$${") so that Switchboard
// never expands a variable the publisher named: a server.json must not be
// able to read the user's environment into its arguments or headers.
// Build is pure and deterministic.
func (p *Plan) Build(opts *BuildOptions) (*Definition, error) {
	if opts == nil {
		opts = &BuildOptions{}
	}
	b := builder{plan: p, opts: opts}
	for _, v := range p.Inputs {
		if val, ok := opts.Values[v.Key]; ok {
			if err := checkValue(v, val); err != nil {
				return nil, err
			}
		}
	}
	var def *Definition
	if p.Package != nil {
		def = b.pkg(p.Package)
	} else {
		def = b.remote(p.Remote)
	}
	if len(b.missing) > 0 {
		return nil, &MissingError{Vars: b.missing}
	}
	return def, nil
}

func checkValue(v Var, val string) error {
	if len(v.Choices) > 0 && !(v.Secret && strings.Contains(val, "${")) {
		ok := false
		for _, c := range v.Choices {
			ok = ok || c == val
		}
		if !ok {
			return fmt.Errorf("%s: %q is not one of %s", v.Key, val, strings.Join(v.Choices, ", "))
		}
	}
	switch v.Format {
	case "number":
		if _, err := strconv.ParseFloat(val, 64); err != nil && !strings.Contains(val, "${") {
			return fmt.Errorf("%s: %q is not a number", v.Key, val)
		}
	case "boolean":
		if val != "true" && val != "false" && !strings.Contains(val, "${") {
			return fmt.Errorf("%s: %q is not true or false", v.Key, val)
		}
	}
	return nil
}

type builder struct {
	plan    *Plan
	opts    *BuildOptions
	missing []Var
}

func (b *builder) lookup(key string) Var {
	for _, v := range b.plan.Inputs {
		if v.Key == key {
			return v
		}
	}
	return Var{Key: key, Ref: EnvName(key)}
}

// resolve is the text written for v, and whether v is set at all (an
// optional value with no default and none given is left out). lit
// reports text of the publisher's (a default), not yet escaped: the
// caller escapes it together with the fixed text around it, since "$"
// and "{HOME}" escaped apart would still join into "${HOME}".
func (b *builder) resolve(v Var) (s string, lit, ok bool) {
	val, given := b.opts.Values[v.Key]
	switch {
	case v.Secret && b.opts.SecretRefs && b.opts.Stored[v.Key] != "":
		return "${secret:" + b.opts.Stored[v.Key] + "}", false, true
	case v.Secret && b.opts.SecretRefs && (given || v.Required):
		return "${" + v.Ref + "}", false, true
	case given:
		return val, false, true
	case v.Default != "":
		return v.Default, true, true
	case v.Required:
		b.noteMissing(v)
	}
	return "", false, false
}

func (b *builder) noteMissing(v Var) {
	for _, m := range b.missing {
		if m.Key == v.Key {
			return
		}
	}
	b.missing = append(b.missing, v)
}

// fill expands the {variables} of a fixed value; ok is false when one is
// unset (then the whole value is left out). The publisher's text (the
// value and defaults) is escaped as a whole, between the user's values.
func (b *builder) fill(value string, vars map[string]Input) (string, bool) {
	var out, lit strings.Builder
	flush := func() {
		out.WriteString(escape(lit.String()))
		lit.Reset()
	}
	ok := true
	rest := value
	for {
		i := strings.IndexByte(rest, '{')
		if i < 0 {
			break
		}
		j := strings.IndexByte(rest[i:], '}')
		if j < 0 {
			break
		}
		name := rest[i+1 : i+j]
		if _, isVar := vars[name]; !isVar {
			lit.WriteString(rest[:i+j+1])
			rest = rest[i+j+1:]
			continue
		}
		lit.WriteString(rest[:i])
		s, isLit, set := b.resolve(b.lookup(name))
		ok = ok && set
		if isLit {
			lit.WriteString(s)
		} else {
			flush()
			out.WriteString(s)
		}
		rest = rest[i+j+1:]
	}
	lit.WriteString(rest)
	flush()
	return out.String(), ok
}

// value is the text of an argument, variable or header: its fixed value
// filled in, else the user's.
func (b *builder) value(key string, in Input) (string, bool) {
	if in.Value != "" {
		return b.fill(in.Value, in.Variables)
	}
	s, lit, ok := b.resolve(b.lookup(key))
	if lit {
		s = escape(s)
	}
	return s, ok
}

func (b *builder) args(list []Argument) []string {
	var out []string
	for _, a := range list {
		v, ok := b.value(argKey(a), a.Input)
		if a.Type == "named" {
			if a.Name == "" || !ok {
				continue
			}
			if a.Value == "" && a.Format == "boolean" {
				// A switch: present when true.
				if v == "true" {
					out = append(out, a.Name)
				}
				continue
			}
			out = append(out, a.Name)
			if v != "" {
				out = append(out, v)
			}
			continue
		}
		if ok {
			out = append(out, v)
		}
	}
	return out
}

func (b *builder) pkg(pkg *Package) *Definition {
	runtime, _ := runtimeFor(pkg) // NewPlan checked it
	def := &Definition{Type: "stdio", Command: runtime}
	env := map[string]string{}
	var envNames []string
	for _, e := range pkg.EnvironmentVariables {
		if v, ok := b.value(e.Name, e.Input); ok {
			env[e.Name] = v
			envNames = append(envNames, e.Name)
		}
	}
	if len(env) > 0 {
		def.Env = env
	}
	rt := b.args(pkg.RuntimeArguments)
	def.RuntimeArgs = append([]string(nil), rt...)
	pa := b.args(pkg.PackageArguments)
	id, ver := escape(pkg.Identifier), escape(pkg.Version)
	switch runtime {
	case "npx", "bunx", "pnpx":
		if runtime == "npx" && !hasAny(rt, "-y", "--yes") {
			// Without it npx asks on stdin, which is the server's protocol
			// stream, and the server never starts.
			rt = append([]string{"-y"}, rt...)
		}
		def.Args = append(append(rt, at(id, "@", ver)), pa...)
	case "uvx":
		def.Args = append(append(rt, at(id, "==", ver)), pa...)
	case "pipx":
		def.Args = append(append(append([]string{"run"}, rt...), at(id, "==", ver)), pa...)
	case "docker", "podman":
		// The container sees only the variables named with -e: the value
		// comes from the docker process's environment, set from "env".
		args := []string{"run", "-i", "--rm"}
		sort.Strings(envNames)
		for _, n := range envNames {
			args = append(args, "-e", n)
		}
		def.Args = append(append(append(args, rt...), id), pa...)
	case "dnx":
		args := append(append(rt, at(id, "@", ver)), "--yes")
		if len(pa) > 0 {
			args = append(append(args, "--"), pa...)
		}
		def.Args = args
	}
	return def
}

func (b *builder) remote(r *Transport) *Definition {
	t, _ := remoteType(r.Type)
	def := &Definition{Type: t}
	u, ok := b.fill(r.URL, r.Variables)
	_ = ok // an unset optional URL variable leaves its place empty
	def.URL = u
	headers := map[string]string{}
	for _, h := range r.Headers {
		if v, ok := b.value(h.Name, h.Input); ok {
			headers[h.Name] = v
		}
	}
	if len(headers) > 0 {
		def.Headers = headers
	}
	return def
}

func at(id, sep, ver string) string {
	if ver == "" {
		return id
	}
	return id + sep + ver
}

func hasAny(list []string, words ...string) bool {
	for _, s := range list {
		for _, w := range words {
			if s == w {
				return true
			}
		}
	}
	return false
}

// escape writes "${" as "$${", which Switchboard's expansion turns back
// into a literal "${".
func escape(s string) string { return strings.ReplaceAll(s, "${", "$${") }
