package oauth_test

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/switchboard-mcp/switchboard/internal/secretstore"
	"github.com/switchboard-mcp/switchboard/oauth"
)

const handoffResource = "https://mcp.example/mcp"

// A login stored by one Client is exported, imported elsewhere for the
// same server URL, and found there; what cannot be used there is refused
// with nothing stored and nothing of it quoted.
func TestLoginHandoff(t *testing.T) {
	from, to := t.TempDir(), t.TempDir()
	if data, err := oauth.ExportLogin(from, "gh"); data != nil || err != nil {
		t.Fatalf("oauth.ExportLogin without a login = %q, %v; want nil, nil", data, err)
	}
	good := `{"resource":"` + handoffResource + `","client_id":"c","token_url":"https://as.example/token","token":{"access_token":"secret-at-1","refresh_token":"secret-rt-1","token_type":"Bearer"}}`
	if err := os.WriteFile(oauth.TokenFile(from, "gh"), []byte(good), 0o600); err != nil {
		t.Fatal(err)
	}
	data, err := oauth.ExportLogin(from, "gh")
	if err != nil || !strings.Contains(string(data), "secret-rt-1") {
		t.Fatalf("oauth.ExportLogin = %q, %v", data, err)
	}
	store := secretstore.Open(&secretstore.Options{Dir: t.TempDir(), Kind: secretstore.KindFile})
	keys := store.In("oauth/principal/alice").Tokens()
	for name, bad := range map[string]string{
		"not a login":     `{"token":`,
		"other server":    strings.Replace(good, handoffResource, "https://secret.example/mcp", 1),
		"dpop bound":      strings.Replace(good, `"token_type":"Bearer"`, `"token_type":"DPoP"`, 1),
		"no token url":    strings.Replace(good, `"token_url":"https://as.example/token",`, "", 1),
		"secret in error": `{"resource":"secret-at","token":{"access_token":"secret-at"}}`,
	} {
		err := oauth.ImportLogin(to, keys, "gh", handoffResource, []byte(bad))
		var be *oauth.BadLoginError
		if !errors.As(err, &be) || strings.Contains(err.Error(), "secret") {
			t.Errorf("%s: oauth.ImportLogin = %v; want a *oauth.BadLoginError quoting nothing", name, err)
		}
		if ok, _ := oauth.HasLogin(to, keys, "gh"); ok {
			t.Fatalf("%s: a refused login was stored", name)
		}
	}
	if err := oauth.ImportLogin(to, keys, "gh", handoffResource, data); err != nil {
		t.Fatalf("oauth.ImportLogin: %v", err)
	}
	if ok, err := oauth.HasLogin(to, keys, "gh"); !ok || err != nil {
		t.Errorf("oauth.HasLogin after oauth.ImportLogin = %v, %v", ok, err)
	}
	if l, err := store.In("oauth/principal/alice").List(); err != nil || len(l) != 1 {
		t.Errorf("the store holds %v (%v); want the login", l, err)
	}
	if _, err := os.Stat(oauth.TokenFile(to, "gh")); !os.IsNotExist(err) {
		t.Errorf("a token file was written beside the store: %v", err)
	}
	if had, err := oauth.LogoutStore(to, keys, "gh"); !had || err != nil {
		t.Errorf("oauth.LogoutStore = %v, %v", had, err)
	}
	if ok, _ := oauth.HasLogin(to, keys, "gh"); ok {
		t.Errorf("oauth.HasLogin after logout")
	}
}

// What a gateway is handed is never trusted: no input panics, and one
// that is refused stores nothing and is quoted by no error.
func FuzzImportLogin(f *testing.F) {
	f.Add([]byte(`{"resource":"` + handoffResource + `","token_url":"https://as.example/token","token":{"access_token":"a","refresh_token":"r"}}`))
	f.Add([]byte(`{"resource":"` + handoffResource + `","dpop_jkt":"x","token":{"access_token":"a"}}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		err := oauth.ImportLogin(dir, nil, "gh", handoffResource, data)
		ok, _ := oauth.HasLogin(dir, nil, "gh")
		if (err == nil) != ok {
			t.Fatalf("oauth.ImportLogin = %v, stored %v", err, ok)
		}
		if err != nil && len(data) >= 8 && strings.Contains(err.Error(), string(data)) {
			t.Fatalf("the error %q quotes the input", err)
		}
	})
}
