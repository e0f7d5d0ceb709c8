package host

import (
	"regexp"
	"strings"
)

// reasonTailLines is how many of a server's last stderr lines are searched
// for the one that says why it died.
const reasonTailLines = 40

// errorLine matches a line that names an error: Node's "Error: …" and
// "TypeError: …", Python's "ModuleNotFoundError: …" and argparse's
// "prog: error: …", Java's "…Exception: …", Go's "panic: …" and its flag
// package's complaints, and "error: …"/"fatal: …" of most CLIs.
var errorLine = regexp.MustCompile(`^(?:Uncaught )?(?:[A-Za-z_][\w.$]*(?:Error|Exception)(?: \[[^\]]*\])?:|(?:panic|fatal|error|FATAL|ERROR|Error)\b[:\s]|[\w./-]+: (?:error|fatal)\b|flag provided but not defined:|invalid value .* for flag )`)

// usageStart matches the first line of a program's usage text ("Usage:
// prog [options]", Go's "Usage of prog:"), which CLIs print with, and
// often after, the error that made them exit.
var usageStart = regexp.MustCompile(`^(?i:usage)(?::|\s+of\s|\s*$)`)

// reasonLine picks, from the last lines a server wrote to stderr, the one
// that best says why it died: the first line naming an error in the block
// the output ends with, when only a crash's trailer follows it (a stack,
// the error's properties, Node's version banner "Node.js v20.…", Go's
// goroutine dump, the program's usage text), else the last line that is
// neither noise nor usage. An error logged earlier, with the server's own
// lines after it, is not taken for the reason.
func reasonLine(tail []string) string {
	trailer := make([]bool, len(tail))
	usage := make([]bool, len(tail))
	inDump, inUsage := false, false
	for i, l := range tail {
		if strings.HasPrefix(l, "goroutine ") {
			inDump = true // Go: everything after the first goroutine header
		}
		t := strings.TrimSpace(l)
		switch {
		case usageStart.MatchString(t):
			inUsage = true
		case inUsage && isErrorLine(t):
			inUsage = false // the complaint printed after the usage text
		}
		usage[i] = inUsage
		trailer[i] = inDump || inUsage || noiseLine(t) || l != strings.TrimLeft(l, " \t") || strings.HasPrefix(t, "exit status ")
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
	// Nothing but usage: its first line says how the program wants to be run.
	for i, l := range tail {
		if usage[i] && !noiseLine(strings.TrimSpace(l)) {
			return strings.TrimSpace(l)
		}
	}
	return ""
}

func isErrorLine(l string) bool { return errorLine.MatchString(timestamp.ReplaceAllString(l, "")) }

// timestamp is a log line's leading date and time (Go's log, RFC 3339).
var timestamp = regexp.MustCompile(`^\[?\d{4}[/-]\d{2}[/-]\d{2}[ T]\d{2}:\d{2}:\d{2}(?:[.,]\d+)?(?:Z|[+-]\d{2}:?\d{2})?\]?\s+`)

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
