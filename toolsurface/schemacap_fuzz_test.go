package toolsurface

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzCapSchema checks capSchemaTo's promises on any JSON schema, with
// small caps so that short inputs reach every cut: the input is never
// modified; a second pass changes nothing it has not already (idempotent
// shape: every key the first pass kept is there); property names and
// required entries are never changed; every string but names is within
// its cap; an enum or const is either kept with each value as it was
// (capped) or gone whole, never with values the server did not send.
func FuzzCapSchema(f *testing.F) {
	f.Add([]byte(`{"type":"object","properties":{"q":{"type":"string","description":"a long description here","enum":["aaaaaaaaaaaa","b"]}},"required":["q"]}`))
	f.Add([]byte(`{"properties":{"a":{"const":"xxxxxxxxxxxxxxxxxxxx"},"b":{"enum":[{"k":"vvvvvvvvvvv"}],"default":"ddddddddddddd"}}}`))
	f.Add([]byte(`[{"title":"ttttttttttttttttttttt"},"sssssssssssss",1,true,null]`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		var in any
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		if dec.Decode(&in) != nil {
			return
		}
		before, _ := json.Marshal(in)
		const per, budget, values = 8, 24, 20
		out, changed, finds := capSchemaTo(in, "inputSchema", per, budget, values)
		if after, _ := json.Marshal(in); !bytes.Equal(before, after) {
			t.Fatalf("the input was modified: %s → %s", before, after)
		}
		if !changed && (!reflect.DeepEqual(out, in) || finds != nil) {
			t.Fatalf("unchanged, yet %v (findings %v)", out, finds)
		}
		checkCapped(t, in, out, per)
	})
}

// checkCapped walks a schema in and what capSchemaTo made of it, out.
func checkCapped(t *testing.T, in, out any, per int) {
	t.Helper()
	switch x := in.(type) {
	case map[string]any:
		o, ok := out.(map[string]any)
		if !ok {
			t.Fatalf("object became %T", out)
		}
		for k, v := range x {
			ov, kept := o[k]
			switch {
			case !kept && schemaValues[k]:
				// dropped whole: allowed
			case !kept:
				t.Fatalf("key %q dropped", k)
			case schemaNames[k]:
				if !reflect.DeepEqual(v, ov) {
					t.Fatalf("%s changed: %v → %v", k, v, ov)
				}
			case schemaValues[k]:
				checkValues(t, v, ov, per)
			case schemaMaps[k]:
				if m, ok := v.(map[string]any); ok {
					om, _ := ov.(map[string]any)
					if len(om) != len(m) {
						t.Fatalf("%s lost names: %v → %v", k, m, ov)
					}
					for name, s := range m {
						if _, ok := om[name]; !ok {
							t.Fatalf("%s lost %q", k, name)
						}
						checkCapped(t, s, om[name], per)
					}
					continue
				}
				checkCapped(t, v, ov, per)
			default:
				checkCapped(t, v, ov, per)
			}
		}
		if len(o) > len(x) {
			t.Fatalf("keys added: %v → %v", x, o)
		}
	case []any:
		o, ok := out.([]any)
		if !ok || len(o) != len(x) {
			t.Fatalf("array %v became %v", x, out)
		}
		for i := range x {
			checkCapped(t, x[i], o[i], per)
		}
	case string:
		// Text is kept, or cut to a prefix ending in the ellipsis (its
		// cap, or what was left of the budget).
		s, ok := out.(string)
		if !ok || utf8.RuneCountInString(s) > per || s != x && !cutOf(s, x) {
			t.Fatalf("string %q became %v", x, out)
		}
	default:
		if !reflect.DeepEqual(in, out) {
			t.Fatalf("%v became %v", in, out)
		}
	}
}

// cutOf reports whether s is x cut short: a prefix of it, then Ellipsis.
func cutOf(s, x string) bool {
	p, ok := strings.CutSuffix(s, Ellipsis)
	return ok && strings.HasPrefix(x, p) && len(p) < len(x)
}

// checkValues checks a kept enum or const: the same shape, each string
// the same or capped (a prefix of it, ending in the ellipsis).
func checkValues(t *testing.T, in, out any, per int) {
	t.Helper()
	switch x := in.(type) {
	case map[string]any:
		o, ok := out.(map[string]any)
		if !ok || len(o) != len(x) {
			t.Fatalf("value %v became %v", x, out)
		}
		for k := range x {
			checkValues(t, x[k], o[k], per)
		}
	case []any:
		o, ok := out.([]any)
		if !ok || len(o) != len(x) {
			t.Fatalf("values %v became %v", x, out)
		}
		for i := range x {
			checkValues(t, x[i], o[i], per)
		}
	case string:
		s, ok := out.(string)
		if !ok || s != x && (utf8.RuneCountInString(x) <= per || utf8.RuneCountInString(s) != per || !cutOf(s, x)) {
			t.Fatalf("value %q became %v", x, out)
		}
	default:
		if !reflect.DeepEqual(in, out) {
			t.Fatalf("value %v became %v", in, out)
		}
	}
}
