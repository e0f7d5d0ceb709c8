package cli

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// TestDoctorNotesApprovalByName: pre-approval by name in the user's
// global settings approves a server of that name in every repository the
// user opens, whatever it runs; doctor says so, and how to narrow it.
func TestDoctorNotesApprovalByName(t *testing.T) {
	for _, c := range []struct {
		settings map[string]any
		want     string
	}{
		{map[string]any{"enabledMcpjsonServers": []string{"docs"}}, `"enabledMcpjsonServers" docs approves a server of that name in every repository you open`},
		{map[string]any{"enableAllProjectMcpServers": true}, `approves every project server of every repository you open`},
		{map[string]any{"projects": map[string]any{"/elsewhere": map[string]any{"enabledMcpjsonServers": []string{"docs"}}}}, ""},
	} {
		w := newRTWorld(t)
		w.userServers(map[string]any{"mine": w.server("echo")})
		w.writeJSON(filepath.Join(w.sb, UserSettingsFile), c.settings)
		out, errOut, _ := w.run(false, "doctor", "--json")
		var checks []doctorCheck
		if err := json.Unmarshal([]byte(out), &checks); err != nil {
			t.Fatalf("doctor --json: %v\n%s\n%s", err, out, errOut)
		}
		var found *doctorCheck
		for i := range checks {
			if checks[i].Check == "trust" && strings.Contains(checks[i].Message, "every repository you open") {
				found = &checks[i]
			}
		}
		switch {
		case c.want == "" && found != nil:
			t.Errorf("%v: a note for local-only settings: %+v", c.settings, *found)
		case c.want != "" && found == nil:
			t.Errorf("%v: no note; checks:\n%s", c.settings, out)
		case c.want != "" && (!strings.Contains(found.Message, c.want) || found.Level != doctorNote || !strings.Contains(found.Fix, "projects")):
			t.Errorf("%v: note %+v", c.settings, *found)
		}
	}
}
