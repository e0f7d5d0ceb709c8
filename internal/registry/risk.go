package registry

import (
	"encoding/csv"
	"errors"
	"fmt"
	"net/url"
	"path"
	"sort"
	"strings"

	"github.com/switchboard-mcp/switchboard/internal/lazyre"
	"github.com/switchboard-mcp/switchboard/internal/netguard"
	"github.com/switchboard-mcp/switchboard/trust"
)

// A server.json names a package — what the registry lists, what a person
// reads, what the registry may have checked the publisher owns — and may
// add runtimeArguments, which go to the runner (npx, uvx, docker…)
// itself, not to the server. Those can make the runner run something else
// (`npx -c 'sh …'`, `npx --node-options '--require …'`, `uvx --from
// git+https://…`) or give what it runs more than a package gets
// (`docker run -v /:/host --privileged`). Switchboard therefore refuses
// what changes what runs or unconfines it, and writes any other runner
// option only once the person confirmed it (docs/security.md).

// Finding is one runner option (or environment variable) of a registry
// definition that Switchboard refuses or asks about.
type Finding struct {
	// What is the option as written, e.g. `--node-options --require ./x`.
	What string
	// Why says, in plain words, what it does.
	Why string
}

// Review is what a definition built from a registry entry would let its
// publisher decide beyond the package it names.
type Review struct {
	// Refused are never written: they change what runs, or confine it
	// less than the runner does.
	Refused []Finding
	// Confirm are runner options Switchboard does not know to be harmless:
	// written only once the person confirmed them.
	Confirm []Finding
}

// OK reports that nothing is refused or needs confirming.
func (r Review) OK() bool { return len(r.Refused) == 0 && len(r.Confirm) == 0 }

// runnerRules are, per runner, the options known to be harmless and
// those refused. An option in neither needs confirming. Names are the
// option without its "=value".
type runnerRules struct {
	safe   map[string]bool
	refuse map[string]string // option → why
	// mounts are the options whose value names a host path to share.
	mounts map[string]bool
	// values are the options that take a value, which is the next word
	// when it is not written with "=" (even one starting with "-"): that
	// word is no option of its own.
	values map[string]bool
	// abbrev: the runner takes an unambiguous prefix of a long option for
	// the option (npm's nopt: --regis is --registry; Python's argparse).
	abbrev bool
	// dashLong: a long option may be written with one dash (nopt:
	// -registry is --registry).
	dashLong bool
	// shorthands are the runner's other spellings of options, without
	// the dash (nopt: -reg is --registry, -C is --prefix).
	shorthands map[string]string
}

// option is what a runner makes of one word: the option it names (opt,
// as the rules spell it) and the value written inside the word, if any.
type option struct {
	opt      string
	value    string
	hasValue bool
	// exact: the word names opt as the rules spell it (not through an
	// abbreviation, one dash, a shorthand or a cluster of short options).
	exact bool
}

// known reports whether the rules refuse opt or know it to take a value.
func (r runnerRules) known(opt string) bool {
	return r.refuse[opt] != "" || r.values[opt] || r.mounts[opt]
}

// parse is what the runner makes of word, an option: of the ways the
// runner may read it — as written, a shorthand, a long option with one
// dash or abbreviated, a cluster of short options (-iv/:/host is -i and
// -v with the value /:/host) — the one the rules refuse, else one that
// takes a value, else the word as written.
func (r runnerRules) parse(word string) option {
	name, value, hasValue := strings.Cut(word, "=")
	asWritten := option{opt: name, value: value, hasValue: hasValue, exact: true}
	if r.known(name) || r.safe[name] {
		return asWritten
	}
	var cands []option
	bare := strings.TrimLeft(name, "-")
	if long, ok := r.shorthands[bare]; ok {
		cands = append(cands, option{opt: long, value: value, hasValue: hasValue})
	}
	long := name
	if r.dashLong && !strings.HasPrefix(name, "--") && len(bare) > 1 {
		long = "--" + bare
		if r.known(long) {
			cands = append(cands, option{opt: long, value: value, hasValue: hasValue})
		}
	}
	if r.abbrev && strings.HasPrefix(long, "--") && len(long) > 2 {
		for _, m := range []map[string]bool{r.values, r.mounts, keys(r.refuse)} {
			for o := range m {
				if strings.HasPrefix(o, long) {
					cands = append(cands, option{opt: o, value: value, hasValue: hasValue})
				}
			}
		}
	}
	if !strings.HasPrefix(word, "--") && len(word) > 2 {
		for j := 1; j < len(word) && word[j] != '='; j++ {
			o := "-" + word[j:j+1]
			if long, ok := r.shorthands[word[j:j+1]]; ok {
				o = long
			}
			if r.known(o) {
				rest := strings.TrimPrefix(word[j+1:], "=")
				cands = append(cands, option{opt: o, value: rest, hasValue: rest != ""})
				break
			}
		}
	}
	sort.SliceStable(cands, func(i, j int) bool { return cands[i].opt < cands[j].opt })
	for _, c := range cands {
		if r.refuse[c.opt] != "" {
			return c
		}
	}
	for _, c := range cands {
		if r.values[c.opt] || r.mounts[c.opt] {
			return c
		}
	}
	return asWritten
}

func keys(m map[string]string) map[string]bool {
	out := make(map[string]bool, len(m))
	for k := range m {
		out[k] = true
	}
	return out
}

func set(words ...string) map[string]bool {
	m := make(map[string]bool, len(words))
	for _, w := range words {
		m[w] = true
	}
	return m
}

func why(text string, words ...string) map[string]string {
	m := make(map[string]string, len(words))
	for _, w := range words {
		m[w] = text
	}
	return m
}

func merge(ms ...map[string]string) map[string]string {
	out := map[string]string{}
	for _, m := range ms {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}

const (
	whyCommand = "makes the runner run a command or code of the publisher's choosing instead of the package"
	whySource  = "makes the runner fetch the package (or more packages) from somewhere other than the package registry"
	whyConfig  = "points the runner at other configuration, which can change what it runs"
	whyHost    = "gives the container the host's privileges, devices or namespaces"
)

var npmRules = runnerRules{
	safe: set("-y", "--yes", "-q", "--quiet", "--silent", "--prefer-offline", "--prefer-online", "--no-update-notifier"),
	refuse: merge(
		why(whyCommand, "-c", "--call", "--node-options", "--node-arg", "-n", "--script-shell", "--shell"),
		why(whySource, "-p", "--package", "--registry", "--workspace", "-w", "--workspaces"),
		why(whyConfig, "--userconfig", "--globalconfig", "--prefix", "--cache", "--cafile"),
		why(whyTLS, "--ca", "--strict-ssl", "--proxy", "--https-proxy", "--replace-registry-host"),
	),
	values: set("-c", "--call", "--node-options", "--node-arg", "-n", "--script-shell", "--shell", "-p", "--package",
		"--registry", "--workspace", "-w", "--userconfig", "--globalconfig", "--prefix", "--cache", "--cafile", "--loglevel",
		"--ca", "--proxy", "--https-proxy", "--replace-registry-host"),
	abbrev: true, dashLong: true,
	shorthands: map[string]string{"c": "--call", "reg": "--registry", "C": "--prefix", "w": "--workspace", "ws": "--workspaces"},
}

var uvRules = runnerRules{
	safe: set("-q", "--quiet", "--isolated", "--no-cache", "--offline", "--no-progress", "--no-config"),
	refuse: merge(
		why(whySource, "--from", "--with", "--with-editable", "--with-requirements", "--index", "--index-url", "-i",
			"--extra-index-url", "--default-index", "--find-links", "-f"),
		why(whyConfig, "--config-file", "--directory", "--project"),
		why(whyTLS, "--allow-insecure-host"),
	),
	values: set("--from", "--with", "--with-editable", "--with-requirements", "--index", "--index-url", "-i",
		"--extra-index-url", "--default-index", "--find-links", "-f", "--config-file", "--directory", "--project",
		"--python", "-p", "--allow-insecure-host"),
}

var pipxRules = runnerRules{
	safe: set("-q", "--quiet"),
	refuse: merge(
		why(whySource, "--spec", "--index-url", "-i", "--pip-args", "--editable", "-e"),
	),
	values: set("--spec", "--index-url", "-i", "--pip-args", "--python"),
	abbrev: true,
}

var containerRules = runnerRules{
	safe: set("-i", "--interactive", "--rm", "--init", "-t", "--tty", "--read-only", "-e", "--env"),
	refuse: merge(
		why(whyHost, "--privileged", "--cap-add", "--device", "--device-cgroup-rule", "--security-opt", "--pid", "--ipc",
			"--uts", "--userns", "--cgroupns", "--volumes-from"),
		why(whyCommand, "--entrypoint"),
	),
	mounts: set("-v", "--volume", "--mount"),
	values: set("-e", "--env", "--cap-add", "--device", "--device-cgroup-rule", "--security-opt", "--pid", "--ipc",
		"--uts", "--userns", "--cgroupns", "--volumes-from", "--entrypoint", "-v", "--volume", "--mount", "--network",
		"--net", "-p", "--publish", "--user", "-u", "--name", "-w", "--workdir", "--platform", "--label", "-l",
		"--env-file", "--add-host", "--dns", "--memory", "-m", "--cpus"),
}

var dnxRules = runnerRules{
	safe: set("--yes", "-y"),
	refuse: merge(
		why(whySource, "--source", "--add-source"),
		why(whyConfig, "--configfile"),
	),
	values: set("--source", "--add-source", "--configfile", "--version"),
}

func rulesFor(runtime string) runnerRules {
	switch runtime {
	case "npx", "bunx", "pnpx":
		return npmRules
	case "uvx":
		return uvRules
	case "pipx":
		return pipxRules
	case "docker", "podman":
		return containerRules
	}
	return dnxRules
}

// hostTrees are host paths a container is never given, nor anything under
// them: the kernel's views, system configuration and programs, the
// container runtime's state and socket. hostRoots are never given whole
// (the root, every home directory at once); a path under them — a
// directory the user chose to share — is shown and asked about instead.
var (
	hostTrees = []string{"/proc", "/sys", "/dev", "/etc", "/boot", "/run", "/var/run", "/var/lib/docker",
		"/var/lib/containers", "/usr", "/bin", "/sbin", "/lib", "/lib64", "/private/etc", "/private/var/run"}
	hostRoots = []string{"/", "/home", "/Users", "/root", "/var", "/private", "/private/var"}
)

// ReviewDefinition reviews a definition Build made from the plan: its
// runner options (runtimeArguments) and the environment variables that
// change how programs load code (NODE_OPTIONS, LD_PRELOAD, PYTHONPATH…;
// trust.Danger), which a registry definition may not set; or a remote's
// URL (see reviewURL).
func (p *Plan) ReviewDefinition(def *Definition) Review {
	var r Review
	if def == nil {
		return r
	}
	if p.Package == nil {
		return reviewURL(def.URL)
	}
	rules := rulesFor(def.Command)
	args := def.RuntimeArgs
	// open: the word before is an option the rules do not know, which
	// may take the next word for its value.
	open := false
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !strings.HasPrefix(a, "-") {
			// A word of the runner's own, not an option's value, is what
			// it runs: the package would be only its first argument.
			if open {
				r.Confirm = append(r.Confirm, Finding{What: a, Why: "a word given to " + def.Command + " itself, before the package (the value of the option before it, or what " + def.Command + " runs instead of the package)"})
			} else {
				r.Refused = append(r.Refused, Finding{What: a, Why: "a word given to " + def.Command + " itself, before the package: " + def.Command + " would run it instead, the package only its argument"})
			}
			open = false
			continue
		}
		o := rules.parse(a)
		name, value, hasValue := o.opt, o.value, o.hasValue
		open = !hasValue && !rules.known(name) && !rules.safe[name]
		shown, reads := a, ""
		if o.exact {
			shown = name
			if hasValue {
				shown += " " + value
			}
		} else {
			reads = fmt.Sprintf(" (%s reads %s as %s)", def.Command, strings.SplitN(a, "=", 2)[0], name)
		}
		// An option that takes a value takes the next word, whatever it
		// looks like, as the runner does; the last runtime argument takes
		// the package itself.
		if !hasValue && (rules.values[name] || rules.mounts[name]) {
			if i+1 == len(args) {
				why := rules.refuse[name]
				if why == "" {
					why = "takes a value and none follows, so " + def.Command + " takes the package for it and runs the next word instead"
				}
				r.Refused = append(r.Refused, Finding{What: a, Why: why + reads})
				continue
			}
			i++
			value, hasValue = args[i], true
			shown += " " + value
		}
		switch {
		case rules.refuse[name] != "":
			r.Refused = append(r.Refused, Finding{What: shown, Why: rules.refuse[name] + reads})
		case (name == "--network" || name == "--net") && (value == "host" || strings.HasPrefix(value, "container:")):
			r.Refused = append(r.Refused, Finding{What: shown, Why: whyHost + reads})
		case rules.mounts[name]:
			srcs, ok := mountSources(name, value)
			bad := ""
			for _, src := range srcs {
				if unsafeHostPath(src) {
					bad = src
					break
				}
			}
			switch {
			case !ok:
				r.Refused = append(r.Refused, Finding{What: shown, Why: "shares host paths Switchboard cannot make out" + reads})
			case bad != "":
				r.Refused = append(r.Refused, Finding{What: shown, Why: fmt.Sprintf("shares the host's %s with the container", bad) + reads})
			default:
				r.Confirm = append(r.Confirm, Finding{What: shown, Why: "shares a host path with the container" + reads})
			}
		case rules.safe[name] && o.exact:
		default:
			r.Confirm = append(r.Confirm, Finding{What: shown, Why: "an option of " + def.Command + " itself, not of the server" + reads})
		}
	}
	keys := make([]string, 0, len(def.Env))
	for k := range def.Env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		what := "environment variable " + k + "=" + def.Env[k]
		if d := trust.Danger(k); d != "" {
			r.Refused = append(r.Refused, Finding{What: what, Why: d})
			continue
		}
		refused, confirm := runnerEnv(def.Command, rules, k)
		switch {
		case refused != "":
			r.Refused = append(r.Refused, Finding{What: what, Why: refused})
		case confirm != "":
			r.Confirm = append(r.Confirm, Finding{What: what, Why: confirm})
		}
	}
	return r
}

// The environment a definition sets is the runner's as well as the
// server's, and runners take options from it: npm reads NPM_CONFIG_X (any
// case) as --x, uv UV_X as --x, pip PIP_X; docker and podman read which
// daemon and configuration to use. What would be refused as a runner
// option is refused as a variable.
const (
	whyDaemon = "points the runner at another daemon or other configuration, which can change what it runs"
	whyTLS    = "lets whoever is between you and the package registry change what the runner downloads"
	whyProxy  = "sends the runner's downloads, and the server's connections, through that proxy"
)

var (
	// envRefused are refused for every runner.
	envRefused = merge(
		why(whyTLS, "NODE_TLS_REJECT_UNAUTHORIZED", "NODE_EXTRA_CA_CERTS", "SSL_CERT_FILE", "SSL_CERT_DIR",
			"REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE", "UV_INSECURE_HOST", "PIP_TRUSTED_HOST", "PIP_CERT"),
		why(whyConfig, "XDG_CONFIG_HOME", "PIP_CONFIG_FILE"),
		why(whySource, "PIP_EXTRA_INDEX_URL", "PIP_FIND_LINKS"),
		why(whyDaemon, "DOCKER_HOST", "DOCKER_CONTEXT", "DOCKER_CONFIG", "DOCKER_CERT_PATH", "DOCKER_TLS_VERIFY",
			"CONTAINER_HOST", "CONTAINER_CONNECTION", "CONTAINERS_CONF", "CONTAINERS_REGISTRIES_CONF",
			"CONTAINERS_STORAGE_CONF", "REGISTRY_AUTH_FILE"),
	)
	envProxies = set("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY")
	// envOptions are, per runner, the prefix of the variables it reads as
	// its options (the option is the rest, lower case, "_" as "-").
	envOptions = map[string]string{"npx": "NPM_CONFIG_", "bunx": "NPM_CONFIG_", "pnpx": "NPM_CONFIG_", "uvx": "UV_"}
	// envOwn are, per runner, the prefixes of the variables that configure
	// it: any other of them is confirmed.
	envOwn = map[string][]string{
		"npx": {"NPM_CONFIG_"}, "bunx": {"NPM_CONFIG_", "BUN_"}, "pnpx": {"NPM_CONFIG_", "PNPM_"},
		"uvx": {"UV_"}, "pipx": {"PIPX_", "PIP_"}, "docker": {"DOCKER_"}, "podman": {"CONTAINERS_", "CONTAINER_"},
		"dnx": {"NUGET_", "DOTNET_"},
	}
)

// runnerEnv says why the runtime refuses (or asks about) the variable k
// the definition sets, both "" for one that is only the server's.
func runnerEnv(runtime string, rules runnerRules, k string) (refused, confirm string) {
	up := strings.ToUpper(k)
	if w := envRefused[up]; w != "" {
		return w, ""
	}
	if envProxies[up] {
		return "", whyProxy
	}
	if p := envOptions[runtime]; p != "" && strings.HasPrefix(up, p) {
		opt := "--" + strings.ReplaceAll(strings.ToLower(k[len(p):]), "_", "-")
		reads := fmt.Sprintf(" (%s reads %s as %s)", runtime, k, opt)
		if p == "NPM_CONFIG_" && strings.HasSuffix(opt, ":registry") {
			return whySource, "" // npm_config_@scope:registry
		}
		o := rules.parse(opt)
		if w := rules.refuse[o.opt]; w != "" {
			return w + reads, ""
		}
		return "", "sets an option of " + runtime + " itself, not of the server" + reads
	}
	for _, p := range envOwn[runtime] {
		if strings.HasPrefix(up, p) {
			return "", "configures " + runtime + " itself, not the server"
		}
	}
	return "", ""
}

// mountSources are the host paths a -v/--volume (SRC:DST[:opts]) or
// --mount value shares: none for a named or anonymous volume. docker
// reads --mount as a CSV record ("source=/" quoted), its keys in any
// case, and a local volume's volume-opt=device=PATH binds PATH. ok is
// false for a --mount value docker's way of reading cannot be followed.
func mountSources(flag, value string) (srcs []string, ok bool) {
	if flag != "--mount" {
		src, _, found := strings.Cut(value, ":")
		if !found {
			return nil, true // an anonymous volume: a path in the container only
		}
		return []string{src}, true
	}
	fields, err := csv.NewReader(strings.NewReader(value)).Read()
	if err != nil {
		return nil, false
	}
	for _, f := range fields {
		k, v, _ := strings.Cut(f, "=")
		switch strings.ToLower(strings.TrimSpace(k)) {
		case "src", "source":
			srcs = append(srcs, v)
		case "volume-opt":
			if opt, dev, _ := strings.Cut(v, "="); strings.EqualFold(opt, "device") {
				srcs = append(srcs, dev)
			}
		}
	}
	return srcs, true
}

// unsafeHostPath reports whether a mount source is one of hostRoots, is
// or is under one of hostTrees, holds "..", or starts with "~" or a
// variable (the home).
func unsafeHostPath(src string) bool {
	if src == "" || !strings.ContainsAny(src[:1], "/~$.") {
		return false // a named volume
	}
	if strings.HasPrefix(src, "~") || strings.HasPrefix(src, "$") || strings.Contains(src, "..") {
		return true
	}
	// In any case: macOS's file system ignores it.
	clean := strings.ToLower(path.Clean(src))
	for _, h := range hostRoots {
		if clean == strings.ToLower(h) {
			return true
		}
	}
	for _, h := range hostTrees {
		if h = strings.ToLower(h); clean == h || strings.HasPrefix(clean, h+"/") {
			return true
		}
	}
	return false
}

// Package specs: a server.json's identifier and version must name a
// package of the package registry — never a path, a URL, a git repository
// or another protocol (npm's file:, link:, git+https:, github:user/repo;
// pip's URL and path requirements), which would run something the
// registry did not list.
var (
	npmName   = lazyre.New(`^(@[A-Za-z0-9~][A-Za-z0-9._~-]*/)?[A-Za-z0-9~][A-Za-z0-9._~-]*$`)
	plainName = lazyre.New(`^[A-Za-z0-9][A-Za-z0-9._-]*(\[[A-Za-z0-9._,-]+\])?$`)
	version   = lazyre.New(`^[A-Za-z0-9^~<>=*][A-Za-z0-9.+_^~<>=*!-]*$`)
)

// publicRegistries are the package registries a runner fetches from
// unless the person configured another: a server.json's registryBaseUrl
// must be one of them (or be left out).
var publicRegistries = map[string][]string{
	"npm":   {"https://registry.npmjs.org"},
	"pypi":  {"https://pypi.org"},
	"nuget": {"https://api.nuget.org"},
	"oci":   {"https://docker.io"},
}

// baseURLProblem says why pkg's registryBaseUrl is not where its runner
// would fetch it from ("" when it is, or is not given). An OCI image
// reference naming its host (ghcr.io/owner/image) needs none.
func baseURLProblem(pkg *Package) string {
	base := strings.TrimRight(pkg.RegistryBaseURL, "/")
	typ := strings.ToLower(pkg.RegistryType)
	if base == "" {
		return ""
	}
	if typ == "oci" {
		if host, _, ok := strings.Cut(pkg.Identifier, "/"); ok && strings.ContainsAny(host, ".:") {
			return ""
		}
	}
	for _, b := range publicRegistries[typ] {
		if strings.EqualFold(base, b) || strings.HasPrefix(strings.ToLower(base), strings.ToLower(b)+"/") {
			return ""
		}
	}
	what, runner := pkg.RegistryType+" package", "the runner"
	if r, err := runtimeFor(pkg); err == nil {
		runner = r
	}
	if typ == "oci" {
		what = "oci image"
	}
	want := strings.Join(publicRegistries[typ], " or ")
	return fmt.Sprintf("%s %s is published at %s, not %s: %s would fetch whatever has that name where your own configuration points", what, pkg.Identifier, base, want, runner)
}

// packageSpec says why pkg's identifier or version is not a plain package
// of its registry ("" when it is).
func packageSpec(pkg *Package) string {
	id, ver := pkg.Identifier, pkg.Version
	if why := baseURLProblem(pkg); why != "" {
		return why
	}
	switch strings.ToLower(pkg.RegistryType) {
	case "npm":
		if !npmName().MatchString(id) {
			return fmt.Sprintf("npm package identifier %q is not a package name (a path, URL, git or file: spec would run something the registry did not list)", id)
		}
	case "pypi", "nuget":
		if !plainName().MatchString(id) {
			return fmt.Sprintf("%s package identifier %q is not a package name (a path or URL would run something the registry did not list)", pkg.RegistryType, id)
		}
	case "oci":
		if strings.Contains(id, "://") || strings.HasPrefix(id, "/") || strings.HasPrefix(id, ".") {
			return fmt.Sprintf("oci image %q is not an image reference", id)
		}
		return ""
	}
	if ver != "" && !version().MatchString(ver) {
		return fmt.Sprintf("%s package version %q is not a version (a path, URL, git or file: spec would run something the registry did not list)", pkg.RegistryType, ver)
	}
	return ""
}

// reviewURL reviews a remote's URL, where the publisher has Switchboard
// send requests and the person's headers: a cloud metadata or link-local
// address is refused (no server may reach one, netguard); an address on
// the person's own machine or network, plain http to another host, and a
// user name before the host (https://good.example@evil.example/, which
// reads as good.example) need confirming. A host still holding a ${VAR}
// is judged when the server connects.
func reviewURL(raw string) Review {
	var r Review
	u, err := url.Parse(raw)
	if err != nil || strings.Contains(u.Host, "${") {
		return r
	}
	if err := netguard.CheckURL(raw); err != nil {
		var re *netguard.RefusedError
		why := err.Error()
		if errors.As(err, &re) {
			why = re.Reason
		}
		r.Refused = append(r.Refused, Finding{What: raw, Why: why})
		return r
	}
	host := u.Hostname()
	if err := (netguard.Policy{}).CheckURL(raw); err != nil {
		r.Confirm = append(r.Confirm, Finding{What: raw, Why: "reaches " + host + " on your own machine or network, not a server of the publisher's on the internet"})
	} else if strings.EqualFold(u.Scheme, "http") {
		r.Confirm = append(r.Confirm, Finding{What: raw, Why: "sends every request, headers included, unencrypted"})
	}
	if u.User != nil {
		r.Confirm = append(r.Confirm, Finding{What: raw, Why: "the server is " + host + ": " + u.User.Username() + " before the @ is a user name sent to it"})
	}
	return r
}
