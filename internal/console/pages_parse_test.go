package console

import "testing"

// TestPagesParse: the page templates, parsed at the first page shown, parse,
// and hold every page the console shows.
func TestPagesParse(t *testing.T) {
	pages, err := parsePages("/console")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"asks.html", "calls.html", "changes.html", "login.html", "message.html", "permissions.html", "servers.html", "tools.html"} {
		if pages.Lookup(name) == nil {
			t.Errorf("no template %s", name)
		}
	}
}
