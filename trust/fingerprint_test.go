package trust

import (
	"fmt"
	"math/rand"
	"sort"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/switchboard-mcp/switchboard/config"
)

func TestFingerprintSeparatorsCannotBeForged(t *testing.T) {
	for _, tc := range []struct {
		name string
		a, b config.Server
	}{
		{"env key=value split", config.Server{Command: "x", Env: map[string]string{"a": "b=c"}}, config.Server{Command: "x", Env: map[string]string{"a=b": "c"}}},
		{"header split", config.Server{URL: "https://h", Headers: map[string]string{"a": "b: c"}}, config.Server{URL: "https://h", Headers: map[string]string{"a: b": "c"}}},
		{"args joined", config.Server{Command: "x", Args: []string{"a b"}}, config.Server{Command: "x", Args: []string{"a", "b"}}},
		{"arg moved into command", config.Server{Command: "x a"}, config.Server{Command: "x", Args: []string{"a"}}},
		{"args comma", config.Server{Command: "x", Args: []string{"a,b"}}, config.Server{Command: "x", Args: []string{"a", "b"}}},
		{"empty arg", config.Server{Command: "x"}, config.Server{Command: "x", Args: []string{""}}},
		{"env vs header", config.Server{Command: "x", Env: map[string]string{"k": "v"}}, config.Server{Command: "x", Headers: map[string]string{"k": "v"}}},
		{"cwd vs url", config.Server{Command: "x", Cwd: "d"}, config.Server{Command: "x", URL: "d"}},
		{"invalid utf-8 bytes", config.Server{Command: "x\xff"}, config.Server{Command: "x\xfe"}},
		{"invalid utf-8 vs replacement", config.Server{Command: "x\xff"}, config.Server{Command: "x\uFFFD"}},
		{"bytes lookalike", config.Server{Command: "x", Args: []string{"\xff"}}, config.Server{Command: "x", Args: []string{"bytes", "ff"}}},
		{"passthrough", config.Server{Command: "x"}, config.Server{Command: "x", EnvPassthrough: []string{"AWS_SECRET_ACCESS_KEY"}}},
		{"headersHelper", config.Server{URL: "https://h"}, config.Server{URL: "https://h", HeadersHelper: "echo"}},
		{"type", config.Server{Type: config.TypeSSE, URL: "https://h"}, config.Server{URL: "https://h"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if string(Encode(tc.a)) == string(Encode(tc.b)) {
				t.Errorf("same encoding %s", Encode(tc.a))
			}
			if Fingerprint(tc.a) == Fingerprint(tc.b) {
				t.Errorf("same fingerprint")
			}
		})
	}
}

func TestFingerprintIgnoresWhatDoesNotRun(t *testing.T) {
	yes := true
	base := config.Server{Command: "npx", Args: []string{"-y", "srv"}, Env: map[string]string{"A": "1"}}
	same := base
	same.Type = config.TypeStdio // inferred anyway
	same.Description = "words"
	same.Timeout = 5
	same.StartupTimeout = 7
	same.Enabled = &yes
	same.DeferLoading = &yes
	same.Tools = map[string]config.ToolConfig{"t": {DeferLoading: &yes}}
	if Fingerprint(base) != Fingerprint(same) {
		t.Errorf("fingerprint changed with fields that do not change what runs:\n%s\n%s", Encode(base), Encode(same))
	}
	empty := config.Server{Command: "x", Args: []string{}, Env: map[string]string{}, Headers: map[string]string{}, EnvPassthrough: []string{}}
	if Fingerprint(empty) != Fingerprint(config.Server{Command: "x"}) {
		t.Error("empty and absent lists differ, though they run the same")
	}
	dup := config.Server{Command: "x", EnvPassthrough: []string{"B", "A", "B"}}
	if Fingerprint(dup) != Fingerprint(config.Server{Command: "x", EnvPassthrough: []string{"A", "B"}}) {
		t.Error("env_passthrough order or duplicates changed the fingerprint")
	}
}

// TestFingerprintFieldOrder: the order of fields and keys in the file
// does not matter.
func TestFingerprintFieldOrder(t *testing.T) {
	a := `{"command": "node", "args": ["s.js"], "env": {"B": "2", "A": "1"}, "headers": {"y": "1", "x": "2"}, "cwd": "d"}`
	b := `{"cwd": "d", "headers": {"x": "2", "y": "1"}, "env": {"A": "1", "B": "2"}, "args": ["s.js"], "command": "node"}`
	sa, da := config.ParseServer("s", []byte(a))
	sb, db := config.ParseServer("s", []byte(b))
	if len(da)+len(db) > 0 {
		t.Fatalf("diagnostics: %v %v", da, db)
	}
	if Fingerprint(sa) != Fingerprint(sb) {
		t.Errorf("field order changed the fingerprint:\n%s\n%s", Encode(sa), Encode(sb))
	}
}

// TestFingerprintMapOrder builds the same maps in many insertion orders.
func TestFingerprintMapOrder(t *testing.T) {
	keys := []string{"a", "b", "c", "d", "e", "f", "g", "h"}
	want := ""
	r := rand.New(rand.NewSource(1))
	for i := 0; i < 50; i++ {
		perm := r.Perm(len(keys))
		env, hdr := map[string]string{}, map[string]string{}
		for _, j := range perm {
			env[keys[j]] = "v" + keys[j]
			hdr[keys[j]] = "h" + keys[j]
		}
		got := string(Encode(config.Server{Command: "x", Env: env, Headers: hdr}))
		if want == "" {
			want = got
		} else if got != want {
			t.Fatalf("encoding depends on map order:\n%s\n%s", want, got)
		}
	}
}

// canonical is the meaning of a definition for launch: what must be equal
// for two definitions to run the same.
type canonical struct {
	Type, Command, Cwd, URL, Helper string
	Args                            []string
	Env, Headers                    map[string]string
	Pass                            []string
}

func canon(s config.Server) canonical {
	pass := map[string]bool{}
	for _, p := range s.EnvPassthrough {
		pass[p] = true
	}
	var pl []string
	for p := range pass {
		pl = append(pl, p)
	}
	sort.Strings(pl)
	return canonical{string(config.InferType(s)), s.Command, s.Cwd, s.URL, s.HeadersHelper, s.Args, s.Env, s.Headers, pl}
}

var canonOpts = cmp.Options{cmpopts.EquateEmpty()}

// randomServer draws definitions from small alphabets full of the
// characters an encoding could confuse, so that collisions are likely if
// the encoding were ambiguous.
func randomServer(r *rand.Rand) config.Server {
	atoms := []string{"", "a", "b", "=", "a=b", "b=c", ",", "\"", "[", "]", ":", " ", "\\", "\xff", "\uFFFD", "bytes", "ff", "x y", "\n"}
	str := func() string {
		n := r.Intn(3)
		s := ""
		for i := 0; i < n; i++ {
			s += atoms[r.Intn(len(atoms))]
		}
		return s
	}
	list := func() []string {
		n := r.Intn(3)
		if n == 0 {
			return nil
		}
		l := make([]string, n)
		for i := range l {
			l[i] = str()
		}
		return l
	}
	m := func() map[string]string {
		n := r.Intn(3)
		if n == 0 {
			return nil
		}
		out := map[string]string{}
		for i := 0; i < n; i++ {
			out[str()] = str()
		}
		return out
	}
	types := []config.Type{"", config.TypeStdio, config.TypeHTTP, config.TypeSSE}
	return config.Server{
		Type: types[r.Intn(len(types))], Command: str(), Args: list(), Env: m(), Cwd: str(),
		URL: str(), Headers: m(), HeadersHelper: str(), EnvPassthrough: list(),
	}
}

// TestEncodingIsInjective: over many random pairs, two definitions encode
// the same exactly when they mean the same.
func TestEncodingIsInjective(t *testing.T) {
	r := rand.New(rand.NewSource(42))
	seen := map[string]config.Server{}
	collisions := 0
	for i := 0; i < 20000; i++ {
		s := randomServer(r)
		enc := string(Encode(s))
		if prev, ok := seen[enc]; ok {
			collisions++
			if d := cmp.Diff(canon(prev), canon(s), canonOpts); d != "" {
				t.Fatalf("different definitions share an encoding %s:\n%s", enc, d)
			}
			continue
		}
		seen[enc] = s
	}
	// The generator must produce equal definitions sometimes, or the
	// test would not exercise the "same meaning" side at all.
	if collisions == 0 {
		t.Fatal("no two generated definitions were equal: the generator is too wide")
	}
	// And the reverse: equal meanings must encode the same.
	for _, s := range seen {
		c := s
		if c.Args == nil {
			c.Args = []string{}
		}
		c.EnvPassthrough = append(append([]string(nil), s.EnvPassthrough...), s.EnvPassthrough...)
		if string(Encode(c)) != string(Encode(s)) {
			t.Fatalf("equal definitions encode differently: %s vs %s", Encode(c), Encode(s))
		}
	}
}

func ExampleFingerprint() {
	a := config.Server{Command: "x", Env: map[string]string{"a": "b=c"}}
	b := config.Server{Command: "x", Env: map[string]string{"a=b": "c"}}
	fmt.Println(string(Encode(a)))
	fmt.Println(string(Encode(b)))
	fmt.Println(Fingerprint(a) == Fingerprint(b))
	// Output:
	// ["switchboard-launch-v1","stdio","x",[],[["a","b=c"]],"","",[],"",[]]
	// ["switchboard-launch-v1","stdio","x",[],[["a=b","c"]],"","",[],"",[]]
	// false
}
