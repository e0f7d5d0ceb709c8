package gateway

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/host"
)

// TestMembersLifetime: a principal's host is opened once for its calls
// and kept; a reset (the configuration changed) or another set of
// per-member servers retires it, and a retired host is closed only when
// the last call on it is done — a call in flight never loses its
// connection; a failed opening is tried again; after Close calls are
// refused and every idle host is closed.
func TestMembersLifetime(t *testing.T) {
	var mu sync.Mutex
	opened, closed := map[string]int{}, map[string]int{}
	fail := false
	m := &Members{Open: func(_ context.Context, p string) (*host.Host, func(), error) {
		mu.Lock()
		defer mu.Unlock()
		if fail {
			return nil, nil, errors.New("store locked")
		}
		opened[p]++
		h := host.New(nil, nil)
		return h, func() {
			mu.Lock()
			closed[p]++
			mu.Unlock()
			h.Close()
		}, nil
	}}
	count := func(p string) (int, int) {
		mu.Lock()
		defer mu.Unlock()
		return opened[p], closed[p]
	}
	ctx := context.Background()
	servers := []string{"github"}

	h1, rel1, err := m.host(ctx, "alice", servers)
	if err != nil {
		t.Fatal(err)
	}
	h2, rel2, _ := m.host(ctx, "alice", servers)
	hb, relb, _ := m.host(ctx, "bob", servers)
	if h1 != h2 || h1 == hb {
		t.Fatal("alice's calls must share her host, and bob's be another")
	}
	rel2()
	m.Reset() // alice's first call is still in flight
	if o, c := count("alice"); o != 1 || c != 0 {
		t.Fatalf("after reset with a call in flight: opened %d, closed %d", o, c)
	}
	h3, rel3, _ := m.host(ctx, "alice", servers)
	if h3 == h1 {
		t.Fatal("a call after the reset got the retired host")
	}
	rel1() // the last call on the retired host
	if o, c := count("alice"); o != 2 || c != 1 {
		t.Fatalf("after the last call on the retired host: opened %d, closed %d", o, c)
	}
	rel3()
	// Another set of per-member servers: a new host.
	h4, rel4, _ := m.host(ctx, "alice", []string{"github", "jira"})
	if h4 == h3 {
		t.Fatal("a host opened for other servers was reused")
	}
	rel4()
	relb()

	mu.Lock()
	fail = true
	mu.Unlock()
	if _, _, err := m.host(ctx, "carol", servers); err == nil {
		t.Fatal("a failed opening gave a host")
	}
	mu.Lock()
	fail = false
	mu.Unlock()
	if _, rel, err := m.host(ctx, "carol", servers); err != nil {
		t.Fatalf("carol's second try: %v", err)
	} else {
		rel()
	}

	m.Close()
	for _, p := range []string{"alice", "bob", "carol"} {
		if o, c := count(p); o != c {
			t.Errorf("%s after Close: opened %d, closed %d", p, o, c)
		}
	}
	if _, _, err := m.host(ctx, "alice", servers); !errors.Is(err, errMembersClosed) {
		t.Errorf("a call after Close: %v", err)
	}
}

// TestPerMemberFailsClosed: a per-member server reached by a principal of
// the team on a gateway without Members, or whose Members cannot read the
// principal's values, is refused — never run on the gateway's own
// credentials — while the shared token's caller and a fallback "shared"
// entry go to the gateway's host.
func TestPerMemberFailsClosed(t *testing.T) {
	path := t.TempDir() + "/" + AuthFileName
	if err := os.WriteFile(path, []byte(`{"perMember": {"github": {}, "jira": {"fallback": "shared"}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	g := &Gateway{opts: Options{Auth: NewAuth(&AuthOptions{File: path})}, log: slog.New(slog.DiscardHandler)}
	call := func(p *Principal, server string) (*callRecord, *mcp.CallToolResult, error, bool) {
		rec := &callRecord{principal: p}
		ctx := context.WithValue(context.Background(), recordKey{}, rec)
		rt := resolved{name: server + "__get", r: toolRoute{server: server, tool: "get"}, ok: true}
		res, err, ok := g.callMember(ctx, rt, nil)
		return rec, res, err, ok
	}
	alice := &Principal{Name: "alice", KeyID: "0000abcd"}
	rec, res, err, ok := call(alice, "github")
	if !ok || err != nil || res == nil || !res.IsError || rec.credential != CredentialNone {
		t.Errorf("alice on github without Members: ok %v, %v, %+v, credential %q; want refused", ok, err, res, rec.credential)
	}
	if rec, _, _, ok := call(alice, "jira"); ok || rec.credential != CredentialShared {
		t.Errorf("alice on jira (fallback shared): ok %v, credential %q; want the gateway's host", ok, rec.credential)
	}
	if rec, _, _, ok := call(&Principal{Name: SharedTokenPrincipal}, "github"); ok || rec.credential != CredentialShared {
		t.Errorf("the shared token on github: ok %v, credential %q; want the gateway's host", ok, rec.credential)
	}
	if _, _, _, ok := call(alice, "time"); ok {
		t.Error("a server not per-member was taken from the gateway's host")
	}
	g.opts.Members = &Members{
		Missing: func(context.Context, string, string) ([]string, error) { return nil, errors.New("store locked") },
		Open: func(context.Context, string) (*host.Host, func(), error) {
			t.Error("opened a host for values that cannot be read")
			return nil, nil, errors.New("no")
		},
	}
	if rec, _, err, ok := call(alice, "github"); !ok || err == nil || !strings.Contains(err.Error(), "store locked") || rec.credential != CredentialNone {
		t.Errorf("alice with a store that cannot be read: ok %v, %v, credential %q; want refused", ok, err, rec.credential)
	}
}

// TestMembersIdle: a principal's host that no call uses for Members.Idle
// is closed, and its next call opens a new one; a host in use when the
// timer fires, or used again since it was set, is kept; none is left
// after Close.
func TestMembersIdle(t *testing.T) {
	var mu sync.Mutex
	opened, closed := 0, 0
	var fire []func()
	m := &Members{
		Idle: time.Minute,
		afterFunc: func(d time.Duration, f func()) func() bool {
			mu.Lock()
			defer mu.Unlock()
			fire = append(fire, f)
			return func() bool { return true }
		},
		Open: func(context.Context, string) (*host.Host, func(), error) {
			mu.Lock()
			defer mu.Unlock()
			opened++
			h := host.New(nil, nil)
			return h, func() {
				mu.Lock()
				closed++
				mu.Unlock()
				h.Close()
			}, nil
		},
	}
	count := func() (int, int, int) {
		mu.Lock()
		defer mu.Unlock()
		return opened, closed, len(fire)
	}
	// last fires the last timer set, and waits for the closing it starts.
	last := func() {
		mu.Lock()
		f := fire[len(fire)-1]
		mu.Unlock()
		f()
		m.shuts.Wait()
	}
	ctx := context.Background()
	servers := []string{"github"}

	h1, rel1, err := m.host(ctx, "alice", servers)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, n := count(); n != 0 {
		t.Fatalf("a timer was set while a call uses the host")
	}
	rel1()
	_, rel2, _ := m.host(ctx, "alice", servers) // used again before the timer fires
	last()
	if o, c, _ := count(); o != 1 || c != 0 {
		t.Fatalf("a timer that fired while the host was in use: opened %d, closed %d; want it kept", o, c)
	}
	rel2()
	mu.Lock()
	first := fire[0]
	mu.Unlock()
	first() // set before the host was used again: stale
	m.shuts.Wait()
	if o, c, _ := count(); o != 1 || c != 0 {
		t.Fatalf("a timer set before the last use fired: opened %d, closed %d; want it kept", o, c)
	}
	last()
	if o, c, _ := count(); o != 1 || c != 1 {
		t.Fatalf("after the idle timer: opened %d, closed %d; want it closed", o, c)
	}
	h3, rel3, _ := m.host(ctx, "alice", servers)
	if h3 == h1 {
		t.Fatal("the call after the idle close got the closed host")
	}
	rel3()
	m.Close()
	last() // a timer firing after Close does nothing more
	if o, c, _ := count(); o != 2 || c != 2 {
		t.Errorf("after Close: opened %d, closed %d", o, c)
	}
}
