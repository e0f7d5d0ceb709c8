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
// that best says why it died: the last line that names an error, or else
// the last one that is not noise. Node ends a crash with its version
// ("Node.js v20.…") after a stack and the error's properties ("}"), so the
// last line alone says nothing.
func reasonLine(tail []string) string {
	for i := len(tail) - 1; i >= 0; i-- {
		if errorLine.MatchString(strings.TrimSpace(tail[i])) {
			return strings.TrimSpace(tail[i])
		}
	}
	for i := len(tail) - 1; i >= 0; i-- {
		if l := strings.TrimSpace(tail[i]); !noiseLine(l) {
			return l
		}
	}
	return ""
}

// noiseLine reports a line that says nothing about a failure on its own:
// blank, punctuation only ("}", "^"), a runtime's version banner, or a
// stack frame.
func noiseLine(l string) bool {
	if strings.Trim(l, "{}[]()^~,;: \t") == "" {
		return true
	}
	if strings.HasPrefix(l, "Node.js v") || strings.HasPrefix(l, "at ") ||
		strings.HasPrefix(l, "File \"") || strings.HasPrefix(l, "goroutine ") {
		return true
	}
	return false
}
