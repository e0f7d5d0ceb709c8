package host

import (
	"regexp"
	"strings"
)

// reasonTailLines is how many of a server's last stderr lines are searched
// for the one that says why it died.
const reasonTailLines = 40

// errorLine matches a line that names an error: Node's "Error: …" and
// "TypeError: …", Python's "ModuleNotFoundError: …", Java's
// "…Exception: …", Go's "panic: …", and "error: …"/"fatal: …" of most
// CLIs.
var errorLine = regexp.MustCompile(`^(?:Uncaught )?(?:[A-Za-z_][\w.$]*(?:Error|Exception)(?: \[[^\]]*\])?:|(?:panic|fatal|error|FATAL|ERROR|Error)\b[:\s])`)

// reasonLine picks, from the last lines a server wrote to stderr, the one
// that best says why it died: the last line naming an error when only a
// crash's trailer follows it (a stack, the error's properties, Node's
// version banner "Node.js v20.…", Go's goroutine dump), else the last line
// that is not noise. An error logged earlier, with the server's own lines
// after it, is not taken for the reason.
func reasonLine(tail []string) string {
	trailer := make([]bool, len(tail))
	inDump := false
	for i, l := range tail {
		if strings.HasPrefix(l, "goroutine ") {
			inDump = true // Go: everything after the first goroutine header
		}
		t := strings.TrimSpace(l)
		trailer[i] = inDump || noiseLine(t) || l != strings.TrimLeft(l, " \t") || strings.HasPrefix(t, "exit status ")
	}
	for i := len(tail) - 1; i >= 0; i-- {
		l := strings.TrimSpace(tail[i])
		if errorLine.MatchString(timestamp.ReplaceAllString(l, "")) {
			return l
		}
		if !trailer[i] {
			break
		}
	}
	for i := len(tail) - 1; i >= 0; i-- {
		if l := strings.TrimSpace(tail[i]); !noiseLine(l) {
			return l
		}
	}
	return ""
}

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
