package redact

import (
	"encoding/json"
	"strings"
	"testing"
)

// Issue 28 point 11: the audit log and the debug log kept ghp_…, sk-…,
// AKIA… and JWT shapes that no key named. Every shape of the list is
// removed from text, wherever it stands and whatever surrounds it.
func TestTokenShapes(t *testing.T) {
	if len(TokenShapes()) < 10 {
		t.Fatalf("only %d token shapes", len(TokenShapes()))
	}
	for _, sh := range TokenShapes() {
		for _, text := range []string{
			sh.Example,
			"note " + sh.Example + " end",
			`{"text":"` + sh.Example + `"}`,
			"GH_TOKEN_" + sh.Example, // glued to a name with _
			"(" + sh.Example + ")\n",
			"at line 3: " + sh.Example + ".",
		} {
			got := String(text)
			if strings.Contains(got, sh.Example) || !strings.Contains(got, Placeholder) {
				t.Errorf("%s: String(%q) = %q", sh.Name, text, got)
			}
		}
		args := Args(map[string]any{"text": "here: " + sh.Example, "list": []any{sh.Example}})
		if b, _ := json.Marshal(args); strings.Contains(string(b), sh.Example) {
			t.Errorf("%s: Args kept it: %s", sh.Name, b)
		}
	}
}

// Text that resembles a credential's start but is not one stays, and so
// do file positions whose file name holds a secret word (issue 29 point
// 20: "keymap.js:12:3" lost its position to the key=value rule).
func TestNotSecrets(t *testing.T) {
	for _, text := range []string{
		"at Object.<anonymous> (/app/src/keymap.js:12:3)",
		"keyboard.ts:120:7: error TS2345",
		"error in token_store.py:42",
		"monkey.go:8",
		"see /home/me/.ssh/authorized_keys.bak:3",
		"npm i sk-learn-extension-for-things",
		"the task-force-meeting-notes-of-this-week",
		"AKIA is how AWS ids start",
		"eyJ alone is not a token",
		"git checkout ghp_short",
	} {
		if got := String(text); got != text {
			t.Errorf("String(%q) = %q, want it unchanged", text, got)
		}
	}
	// A secret-named key with a value still goes, colon or not.
	for text, want := range map[string]string{
		"apikey:12345":       "apikey:" + Placeholder,
		"API_KEY=abc.js:1":   "API_KEY=" + Placeholder,
		"password: hunter22": "password: " + Placeholder,
	} {
		if got := String(text); got != want {
			t.Errorf("String(%q) = %q, want %q", text, got, want)
		}
	}
}
