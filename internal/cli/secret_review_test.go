package cli

import (
	"strings"
	"testing"

	"github.com/switchboard-mcp/switchboard/internal/testserver/testhttp"
)

// TestRemoteReviewNamesVariablesSent: a repository's remote server that
// puts ${VAR} in its url or a header sends the values of those variables
// of yours to its address; the review names them in one line, as it names
// the variables a stdio server gets, and never shows a value.
func TestRemoteReviewNamesVariablesSent(t *testing.T) {
	srv := testhttp.Start(t, "echo", testhttp.Options{})
	w := trustWorld(t, map[string]any{
		"type":    "http",
		"url":     srv.URL + "?t=${PLANTED_TOKEN}",
		"headers": map[string]any{"X-Trace": "${OTHER_VAR:-${THIRD_VAR}}", "Authorization": "Bearer ${secret:API}"},
	})
	env := map[string]string{"PLANTED_TOKEN": "planted-url-value", "OTHER_VAR": "planted-header-value"}
	_, errOut, code := w.runEnv(env, "mcp", "approve", "repo")
	if code != 2 {
		t.Fatalf("approve without a terminal: exit %d\n%s", code, errOut)
	}
	want := "  sends:    the values of your variables OTHER_VAR, PLANTED_TOKEN, THIRD_VAR to its address, in its url and headers\n"
	if !strings.Contains(errOut, want) {
		t.Errorf("review lacks %q:\n%s", want, errOut)
	}
	if strings.Contains(errOut, "planted-") {
		t.Errorf("review shows a value:\n%s", errOut)
	}
}

// TestReviewWarnsOfSecretsOnTheCommandLine: a repository's server whose
// arguments expand a secret-named variable of yours puts its value on a
// command line every user of the machine can read (ps); the review says
// so under the command line, as it refuses ${secret:NAME} there.
func TestReviewWarnsOfSecretsOnTheCommandLine(t *testing.T) {
	def := w0server()
	def["args"] = append(def["args"].([]string), "--api-key", "${PLANTED_API_KEY}", "--home", "${HOME}")
	w := trustWorld(t, def)
	_, errOut, code := w.runEnv(map[string]string{"PLANTED_API_KEY": "planted-arg-value"}, "mcp", "approve", "repo")
	if code != 2 {
		t.Fatalf("approve without a terminal: exit %d\n%s", code, errOut)
	}
	want := "            ⚠ the value of your PLANTED_API_KEY goes on its command line, which every user of this machine can read (ps): a secret belongs in env\n"
	if !strings.Contains(errOut, want) {
		t.Errorf("review lacks %q:\n%s", want, errOut)
	}
	if strings.Contains(errOut, "planted-arg-value") || strings.Contains(errOut, "HOME goes") {
		t.Errorf("review shows a value, or warns of HOME:\n%s", errOut)
	}
}
