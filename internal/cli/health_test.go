package cli

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// A server whose tools/list fails is not "connected, 0 tools": status
// names the failed request in its reason and listErrors, shows the count
// as unknown, and doctor fails its check (issue 16, point 5).
func TestStatusAndDoctorNameAFailedList(t *testing.T) {
	w := newRTWorld(t)
	w.userServers(map[string]any{"lister": w.server("list-error", "-fail", "tools/list", "-message", "index not loaded")})

	out, _, err := runStatus(t, w, false, true)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Servers []struct {
			State      string            `json:"state"`
			Error      string            `json:"error"`
			ListErrors map[string]string `json:"listErrors"`
		} `json:"servers"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil || len(got.Servers) != 1 {
		t.Fatalf("%v\n%s", err, out)
	}
	st := got.Servers[0]
	if !strings.Contains(st.Error, "tools/list failed") || !strings.Contains(st.Error, "index not loaded") || st.ListErrors["tools/list"] == "" {
		t.Errorf("status %+v; want the failed tools/list named", st)
	}
	if piped, _, _ := runStatus(t, w, false, false); !strings.Contains(piped, "\t?\t") && !strings.Contains(piped, " ? ") {
		t.Errorf("piped status %q; want the tool count shown as unknown", piped)
	}

	f, _, dout, _ := w.factory(false)
	f.Global.Wait = 20 * time.Second
	_ = doctorRun(context.Background(), &DoctorOptions{runtimeOptions: rtOptions(f), JSON: true})
	var checks []struct {
		Check, Server, Message string
		OK                     bool
	}
	if err := json.Unmarshal(dout.Bytes(), &checks); err != nil {
		t.Fatalf("%v\n%s", err, dout)
	}
	found := false
	for _, c := range checks {
		if c.Check == "server" && c.Server == "lister" {
			found = true
			if c.OK || !strings.Contains(c.Message, "tools/list failed: ") {
				t.Errorf("doctor check %+v; want a failure naming tools/list", c)
			}
		}
	}
	if !found {
		t.Errorf("no server check for lister: %s", dout)
	}
}
