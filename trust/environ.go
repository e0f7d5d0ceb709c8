package trust

import (
	"runtime"
	"slices"
	"sort"
	"strings"

	"github.com/switchboard-mcp/switchboard/config"
)

// BaseEnv returns the names of the part of the parent environment every
// repo-authored (project-scope) server inherits (docs/security.md,
// Environment of repo-authored servers). "LC_*" stands for
// every variable whose name starts with LC_. The slice is a fresh copy: a
// caller may keep or change it without widening what Environ passes on.
func BaseEnv() []string { return slices.Clone(baseEnv) }

// baseEnv is BaseEnv's list. It is unexported so that no importer can
// append to what every repository's server inherits.
var baseEnv = []string{"PATH", "HOME", "USER", "LOGNAME", "LANG", "LC_*", "TERM", "TMPDIR", "SHELL", "TZ"}

// windowsBaseEnv is what a Windows program cannot start without (the
// system directory, the shell, executable extensions, temp dirs, the
// profile): the same role as BaseEnv, on the platform that needs more.
var windowsBaseEnv = []string{"SYSTEMROOT", "WINDIR", "COMSPEC", "PATHEXT", "TEMP", "TMP", "USERPROFILE", "SYSTEMDRIVE"}

// References returns the variable names def's written fields refer to as
// ${VAR} or ${VAR:-default} (defaults included, so "${A:-${B}}" names A
// and B): in command, args, env values, url, header values and
// headersHelper. Sorted, without duplicates. "$${X}" is an escape, not a
// reference.
func References(def config.Server) []string {
	seen := map[string]bool{}
	record := func(name string) (string, bool) {
		seen[name] = true
		return "", false // unset, so that every default is visited too
	}
	scan := func(s string) { config.Expand(s, record) }
	scan(def.Command)
	for _, a := range def.Args {
		scan(a)
	}
	for _, v := range def.Env {
		scan(v)
	}
	scan(def.URL)
	for _, v := range def.Headers {
		scan(v)
	}
	scan(def.HeadersHelper)
	return sortedSet(seen)
}

// Named returns the variables a repo-authored server's approved definition
// names, which it may inherit besides [BaseEnv]: its env keys, its ${VAR}
// references ([References]) and its env_passthrough list. Sorted, without
// duplicates.
func Named(def config.Server) []string {
	seen := map[string]bool{}
	for k := range def.Env {
		seen[k] = true
	}
	for _, n := range References(def) {
		seen[n] = true
	}
	for _, n := range def.EnvPassthrough {
		if n != "" {
			seen[n] = true
		}
	}
	return sortedSet(seen)
}

// Environ returns the parent environment (KEY=VALUE entries) that the
// server rs may inherit, before its own env is laid over it. A user-trusted
// server (user or local scope, --mcp-config, managed, embedder) inherits
// all of parent. A repo-authored one (rs.Trust == config.TrustRepo)
// inherits only [BaseEnv] and what its written definition names ([Named]).
// Order is kept; parent is not modified.
func Environ(rs *config.ResolvedServer, parent []string) []string {
	if rs == nil || rs.Trust != config.TrustRepo {
		return append([]string(nil), parent...)
	}
	allow := allowSet(rs.Written)
	var out []string
	for _, kv := range parent {
		k, _, _ := strings.Cut(kv, "=")
		if passes(k, allow) {
			out = append(out, kv)
		}
	}
	return out
}

// PassedVariables returns the names of the parent variables that rs will
// inherit (see [Environ]), sorted: what the approval prompt lists. For a
// user-trusted server that is every variable of parent.
func PassedVariables(rs *config.ResolvedServer, parent []string) []string {
	seen := map[string]bool{}
	for _, kv := range Environ(rs, parent) {
		k, _, _ := strings.Cut(kv, "=")
		seen[k] = true
	}
	return sortedSet(seen)
}

// allowSet is the set of names a repo server may inherit, in the form
// passes compares (upper case on Windows, where names are not case
// sensitive).
func allowSet(def config.Server) map[string]bool {
	allow := map[string]bool{}
	add := func(n string) { allow[envKey(n)] = true }
	for _, n := range baseEnv {
		add(n)
	}
	if runtime.GOOS == "windows" {
		for _, n := range windowsBaseEnv {
			add(n)
		}
	}
	for _, n := range Named(def) {
		add(n)
	}
	return allow
}

func passes(key string, allow map[string]bool) bool {
	if key == "" {
		return false
	}
	k := envKey(key)
	return allow[k] || (strings.HasPrefix(k, "LC_") && allow["LC_*"])
}

func envKey(k string) string {
	if runtime.GOOS == "windows" {
		return strings.ToUpper(k)
	}
	return k
}

// Danger explains in plain words why an env key changes how a program
// loads code (LD_PRELOAD, NODE_OPTIONS, PYTHONPATH, PATH, …), or returns ""
// for a key that does not. The approval prompt shows it next to the key.
func Danger(key string) string {
	k := strings.ToUpper(key)
	if w, ok := dangerous[k]; ok {
		return w
	}
	for _, p := range dangerousPrefixes {
		if strings.HasPrefix(k, p.prefix) {
			return p.why
		}
	}
	return ""
}

const anyCode = ": this server can run any code before its own"

var dangerous = map[string]string{
	"LD_PRELOAD":            "LD_PRELOAD loads a library into the program before anything else" + anyCode,
	"LD_LIBRARY_PATH":       "LD_LIBRARY_PATH changes where the program finds its libraries" + anyCode,
	"LD_AUDIT":              "LD_AUDIT loads a library into the program before anything else" + anyCode,
	"NODE_OPTIONS":          "NODE_OPTIONS changes how node loads code" + anyCode,
	"NODE_PATH":             "NODE_PATH changes where node finds modules" + anyCode,
	"PYTHONPATH":            "PYTHONPATH changes where python finds modules" + anyCode,
	"PYTHONSTARTUP":         "PYTHONSTARTUP runs a file when python starts" + anyCode,
	"PYTHONHOME":            "PYTHONHOME changes where python finds its standard library" + anyCode,
	"PYTHONUSERBASE":        "PYTHONUSERBASE changes where python finds modules" + anyCode,
	"PYTHONWARNINGS":        "PYTHONWARNINGS can make python import any module at start" + anyCode,
	"PYTHONBREAKPOINT":      "PYTHONBREAKPOINT makes python import any module" + anyCode,
	"PATH":                  "PATH changes which programs run when a name is given instead of a path" + anyCode,
	"BASH_ENV":              "BASH_ENV runs a file whenever bash starts" + anyCode,
	"ENV":                   "ENV runs a file whenever sh starts" + anyCode,
	"PERL5OPT":              "PERL5OPT adds options (and modules) to every perl run" + anyCode,
	"PERL5LIB":              "PERL5LIB changes where perl finds modules" + anyCode,
	"PERLLIB":               "PERLLIB changes where perl finds modules" + anyCode,
	"RUBYOPT":               "RUBYOPT adds options (and libraries) to every ruby run" + anyCode,
	"RUBYLIB":               "RUBYLIB changes where ruby finds libraries" + anyCode,
	"JAVA_TOOL_OPTIONS":     "JAVA_TOOL_OPTIONS adds options (and agents) to every java run" + anyCode,
	"_JAVA_OPTIONS":         "_JAVA_OPTIONS adds options (and agents) to every java run" + anyCode,
	"JDK_JAVA_OPTIONS":      "JDK_JAVA_OPTIONS adds options (and agents) to every java run" + anyCode,
	"CLASSPATH":             "CLASSPATH changes where java finds classes" + anyCode,
	"GIT_SSH_COMMAND":       "GIT_SSH_COMMAND replaces the program git runs for ssh" + anyCode,
	"GIT_EXEC_PATH":         "GIT_EXEC_PATH changes where git finds its own programs" + anyCode,
	"PROMPT_COMMAND":        "PROMPT_COMMAND runs a command in every interactive bash" + anyCode,
	"GCONV_PATH":            "GCONV_PATH makes the C library load code for character sets" + anyCode,
	"HOME":                  "HOME moves the home directory, and with it every start-up file programs read" + anyCode,
	"ZDOTDIR":               "ZDOTDIR changes which start-up files zsh runs" + anyCode,
	"SHELLOPTS":             "SHELLOPTS changes how bash runs every script",
	"BASHOPTS":              "BASHOPTS changes how bash runs every script",
	"IFS":                   "IFS changes how shells split words, which changes what scripts run",
	"NPM_CONFIG_PREFIX":     "NPM_CONFIG_PREFIX changes where npm and npx find packages" + anyCode,
	"NPM_CONFIG_REGISTRY":   "NPM_CONFIG_REGISTRY changes where npx downloads packages from" + anyCode,
	"PIP_INDEX_URL":         "PIP_INDEX_URL changes where pip downloads packages from" + anyCode,
	"UV_INDEX_URL":          "UV_INDEX_URL changes where uv downloads packages from" + anyCode,
	"DOTNET_STARTUP_HOOKS":  "DOTNET_STARTUP_HOOKS loads code into every .NET program" + anyCode,
	"COR_PROFILER_PATH":     "COR_PROFILER_PATH loads a profiler into every .NET program" + anyCode,
	"CORECLR_PROFILER_PATH": "CORECLR_PROFILER_PATH loads a profiler into every .NET program" + anyCode,
}

var dangerousPrefixes = []struct{ prefix, why string }{
	{"DYLD_", "DYLD_ variables change which libraries macOS loads into the program" + anyCode},
	{"LD_", "LD_ variables change how the system loader loads the program's libraries" + anyCode},
	{"BASH_FUNC_", "BASH_FUNC_ variables define shell functions that replace commands in bash scripts" + anyCode},
	{"GIT_CONFIG", "GIT_CONFIG variables add git settings, which can run commands" + anyCode},
}

func sortedSet(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
