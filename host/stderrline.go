package host

import (
	"strings"

	"github.com/switchboard-mcp/switchboard/internal/lazyre"
)

// reasonTailLines is how many of a server's last stderr lines are searched
// for the one that says why it died: all that the process's stderr ring
// keeps (64 KiB by default). A CLI that dies on a bad flag prints its
// error and then its whole usage text, which for servers with many flags
// (mcp-grafana, kubernetes-mcp-server) runs to hundreds of lines: a window
// of a few dozen lines would hold only the usage, and its last line would
// be taken for the reason.
const reasonTailLines = 0

// errorLine matches a line that names an error: Node's "Error: …" and
// "TypeError: …", Python's "ModuleNotFoundError: …" and argparse's
// "prog: error: …", Java's "…Exception: …", Go's "panic: …" and its flag
// package's complaints, and "error: …"/"fatal: …" of most CLIs.
var errorLine = lazyre.New(`^(?:Uncaught )?(?:[A-Za-z_][\w.$]*(?:Error|Exception)(?: \[[^\]]*\])?:|(?:panic|fatal|error|FATAL|ERROR|Error)\b[:\s]|[\w./-]+: (?:error|fatal)\b|flag provided but not defined:|invalid value .* for flag )`)

// usageStart matches the first line of a program's usage text ("Usage:
// prog [options]", Go's "Usage of prog:"), which CLIs print with, and
// often after, the error that made them exit.
var usageStart = lazyre.New(`^(?i:usage)(?::|\s+of\s|\s*$)`)

// usagePart matches the other unindented lines of a usage text: its
// section headings (cobra's "Flags:" and "Available Commands:", commander's
// "Options:", clap's "Arguments:") and the closing pointers to --help
// (cobra's `Use "prog [command] --help" for more information…`, clap's
// "For more information, try '--help'."). A stderr tail that begins in the
// middle of a long usage text still shows it to be one.
var usagePart = lazyre.New(`^(?:(?i:(?:global |available |additional )?(?:flags|options|commands|arguments|positional arguments|subcommands|examples?|aliases|help topics|environment variables)):$|Use ".*--help" for more information|For more information,? (?:try|run|see) |(?:Run|See|Try) '[^']*--help' for )`)

// adviceLine matches a line that a program prints after its error to say
// what to do about it: git's and clap's "hint:"/"tip:"/"help:"/"note:",
// "Try again later", "Please set …", "Did you mean …?", "See …",
// "Make sure …", "Run 'npm install' first". It belongs to the error
// before it, which stays the reason.
var adviceLine = lazyre.New("^(?i:(?:hint|tip|help|note|suggestion|advice)\\s*:|(?:try|please|did you mean|see|check|make sure|ensure|perhaps|maybe|consider|to fix|you (?:may|can|might|must|should|need)|for more)\\b|run [`'\"])")

// reasonLine picks, from the last lines a server wrote to stderr, the one
// that best says why it died: the first line naming an error in the block
// the output ends with, when only a crash's trailer follows it (a stack,
// the error's properties, Node's "Require stack:" and version banner
// "Node.js v20.…", Go's goroutine dump, the program's usage text, advice
// on what to do: "hint: …", "Try again later"), else the
// last line that is neither noise nor usage. An error logged earlier, with
// the server's own lines after it, is not taken for the reason. When the
// lines are nothing but usage, the usage's first line is the reason if the
// tail holds it, else there is none: a line from the middle of a usage
// text says nothing about what went wrong.
func reasonLine(tail []string) string {
	return withNpxRepair(stderrReason(tail))
}

// npxIncomplete matches Node's complaint about a package missing from
// npx's own copy of a server's packages (~/.npm/_npx/<hash>): the copy a
// download cut short leaves behind (a command that stopped the server
// while npx was still installing it — a one-shot `switchboard tools`, a
// client closed early), which npx then runs as it is, every time.
var npxIncomplete = lazyre.New(`Cannot find (?:package|module) '[^']+' imported from (.*?[/\\]_npx[/\\][0-9a-f]+)[/\\]node_modules[/\\]`)

// withNpxRepair adds to reason, when it is npxIncomplete's, what to do:
// npx does not mend the copy itself.
func withNpxRepair(reason string) string {
	m := npxIncomplete().FindStringSubmatch(reason)
	if m == nil {
		return reason
	}
	return reason + " — npx's copy of the server's packages in " + m[1] + " is incomplete (an earlier download was cut short): delete that folder and start the server again"
}

// stderrReason is reasonLine before withNpxRepair.
func stderrReason(tail []string) string {
	if r := npmReason(tail); r != "" {
		return r
	}
	trailer := make([]bool, len(tail))
	usage := make([]bool, len(tail))
	inDump, inUsage, inRequire := false, false, false
	for i, l := range tail {
		if strings.HasPrefix(l, "goroutine ") {
			inDump = true // Go: everything after the first goroutine header
		}
		t := strings.TrimSpace(l)
		switch {
		case usageStart().MatchString(t):
			inUsage = true
		case usagePart().MatchString(t):
			if !inUsage {
				// A tail that begins inside a usage text: the indented
				// and blank lines before this heading are usage too.
				for j := i - 1; j >= 0 && (tail[j] != strings.TrimLeft(tail[j], " \t") || strings.TrimSpace(tail[j]) == ""); j-- {
					usage[j], trailer[j] = true, true
				}
			}
			inUsage = true
		case inUsage && isErrorLine(t):
			inUsage = false // the complaint printed after the usage text
		}
		usage[i] = inUsage
		// Node: "Require stack:" and its "- /path/file.js" lines follow
		// "Error: Cannot find module 'x'", unindented.
		switch {
		case t == "Require stack:":
			inRequire = true
		case inRequire && !strings.HasPrefix(t, "- "):
			inRequire = false
		}
		trailer[i] = inDump || inUsage || inRequire || noiseLine(t) || l != strings.TrimLeft(l, " \t") || strings.HasPrefix(t, "exit status ") || adviceLine().MatchString(t)
	}
	found := ""
	for i := len(tail) - 1; i >= 0; i-- {
		l := strings.TrimSpace(tail[i])
		if !usage[i] && isErrorLine(l) {
			found = l // go on: an earlier error of the same block is the cause
			continue
		}
		if !trailer[i] {
			break
		}
	}
	if found != "" {
		return found
	}
	for i := len(tail) - 1; i >= 0; i-- {
		if l := strings.TrimSpace(tail[i]); !usage[i] && !noiseLine(l) {
			return l
		}
	}
	// Nothing but usage: its first line says how the program wants to be
	// run, if the tail reaches back to it.
	for i, l := range tail {
		if t := strings.TrimSpace(l); usage[i] && usageStart().MatchString(t) {
			return t
		}
	}
	return ""
}
func isErrorLine(l string) bool { return errorLine().MatchString(timestamp().ReplaceAllString(l, "")) }

// timestamp is a log line's leading date and time (Go's log, RFC 3339).
var timestamp = lazyre.New(`^\[?\d{4}[/-]\d{2}[/-]\d{2}[ T]\d{2}:\d{2}:\d{2}(?:[.,]\d+)?(?:Z|[+-]\d{2}:?\d{2})?\]?\s+`)

// noiseLine reports a line that says nothing about a failure on its own:
// blank, punctuation only ("}", "^"), a runtime's version banner, or a
// stack frame.
func noiseLine(l string) bool {
	if strings.Trim(l, "{}[]()^~,;: \t") == "" {
		return true
	}
	if strings.HasPrefix(l, "Node.js v") || strings.HasPrefix(l, "at ") ||
		strings.HasPrefix(l, "File \"") || strings.HasPrefix(l, "goroutine ") ||
		strings.HasPrefix(l, "exit status ") || strings.HasPrefix(l, "note: run with `RUST_BACKTRACE") {
		return true
	}
	return false
}

// npmLine is a line of npm's error block ("npm error …", before npm 10
// "npm ERR! …"); its payload follows the prefix.
var npmLine = lazyre.New(`^(npm (?:error|ERR!))(?: (.*))?$`)

// npmSkip are the payloads of an npm error block that say nothing on
// their own: the error's code and system call, a bare status, the log's
// whereabouts, a stack frame or an object's properties (indented), a
// brace.
var npmSkip = lazyre.New(`^(?:(?:code|syscall|errno|path|dest|signal|command|cwd) |\d{3}$|A complete log of this run|Log files were not written|[\s{}]|$)`)

// npmMissing is npm's own sentence for a package or version that does
// not exist, which says it better than the request line before it.
var npmMissing = lazyre.New(`could not be found|is not in (?:this|the npm) registry|No matching version found`)

// npmReason is the reason of a server run by a package runner that failed
// in npm itself (a misspelt package, a version that does not exist, no
// registry): the output ends in npm's error block, whose last line only
// says where npm's log is. The reason is the block's first telling line —
// npm's sentence for a missing package or version when there is one —
// with npm's prefix; "" when the output does not end so.
func npmReason(tail []string) string {
	end := len(tail) - 1
	for end >= 0 && strings.TrimSpace(tail[end]) == "" {
		end--
	}
	if end < 0 || !npmLine().MatchString(tail[end]) {
		return ""
	}
	start := end
	for start > 0 && npmLine().MatchString(tail[start-1]) {
		start--
	}
	first := ""
	for _, l := range tail[start : end+1] {
		m := npmLine().FindStringSubmatch(l)
		payload := m[2]
		if npmSkip().MatchString(payload) {
			continue
		}
		line := m[1] + " " + strings.Join(strings.Fields(payload), " ")
		if npmMissing().MatchString(payload) {
			return line
		}
		if first == "" {
			first = line
		}
	}
	return first
}
