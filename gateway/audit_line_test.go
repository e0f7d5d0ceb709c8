package gateway

import (
	"bytes"
	"encoding/json"
	"math"
	"reflect"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/host"
)

// fill sets every exported field of the struct v points to a value that
// is not its zero value, with strings that need escaping.
func fill(t *testing.T, v reflect.Value, n *int) {
	t.Helper()
	*n++
	switch v.Kind() {
	case reflect.String:
		v.SetString("a<b>&\"c\\\n\u2028é\x01" + string(rune('A'+*n%26)))
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int64:
		v.SetInt(int64(1000 + *n))
	case reflect.Float64:
		v.SetFloat(float64(*n) + 0.125)
	case reflect.Slice:
		s := reflect.MakeSlice(v.Type(), 2, 2)
		for i := range 2 {
			fill(t, s.Index(i), n)
		}
		v.Set(s)
	case reflect.Map:
		if v.Type() != reflect.TypeFor[map[string]any]() {
			t.Fatalf("appendEntry knows no map of type %s", v.Type())
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(`{"z":1e-7,"a":[true,null,"<x>",{"k":-0.5,"b":1e21}],"m":"\u00e9\ud800"}`), &m); err != nil {
			t.Fatal(err)
		}
		v.Set(reflect.ValueOf(m))
	case reflect.Struct:
		if v.Type() == reflect.TypeFor[time.Time]() {
			v.Set(reflect.ValueOf(time.Date(2026, 12, 6, 5, 4, 3, 120_000_000, time.UTC)))
			return
		}
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fill(t, v.Field(i), n)
			}
		}
	default:
		t.Fatalf("appendEntry knows no field of kind %s (%s)", v.Kind(), v.Type())
	}
}

// TestAuditLineEveryField fills every field of an AuditEntry (and of its
// hooks' decisions) and compares the line written by hand with
// encoding/json's: a field added to either struct and not to appendEntry
// fails here.
func TestAuditLineEveryField(t *testing.T) {
	var e AuditEntry
	n := 0
	fill(t, reflect.ValueOf(&e).Elem(), &n)
	if len(e.Hooks) == 0 || e.Hooks[0].Hook == "" || !e.Hooks[0].Refused {
		t.Fatalf("the hooks were not filled: %+v", e.Hooks)
	}
	checkLine(t, &e)

	// And the zero entry: every omitempty field left out.
	checkLine(t, &AuditEntry{})
	checkLine(t, &AuditEntry{Groups: []string{}, Args: map[string]any{}, Hooks: []host.HookDecision{{}}})
}

func checkLine(t *testing.T, e *AuditEntry) {
	t.Helper()
	want, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	got, ok := appendEntry(nil, e)
	if !ok {
		t.Fatalf("appendEntry declined %+v", e)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("appendEntry wrote\n%s\nencoding/json\n%s", got, want)
	}
}

// FuzzAuditLine: whatever appendEntry writes is what encoding/json writes
// for the same entry, byte for byte — strings of any bytes, any float,
// any time and zone, and arguments of any JSON — and it declines only
// what encoding/json cannot write or a zone offset of odd seconds.
func FuzzAuditLine(f *testing.F) {
	f.Add("alice", "mcp__echo__echo", "<redacted> & \"q\"", []byte(`{"text":"hello","n":[1,2.5,-3e-9,null,true,{"b":"\u2029"}]}`), 0.123, int64(1765000000), int64(123456789), 0, 17)
	f.Add("", "\xff\xfe", "\t\b\f\r\x00\x1f\x7f", []byte(`{"a":1e300,"b":-0,"c":123456789012345678901234}`), math.Inf(1), int64(-62135596801), int64(0), 3600*5+1800, -1)
	f.Add("é", "", "", []byte(`[1,2]`), 1e-7, int64(253402300800), int64(1), -7*3600+7, 0)
	f.Fuzz(func(t *testing.T, s1, s2, s3 string, args []byte, d float64, sec, nsec int64, offset, size int) {
		var a map[string]any
		_ = json.Unmarshal(args, &a)
		zone := time.FixedZone("z", offset%(30*3600))
		e := &AuditEntry{
			Time: time.Unix(sec, nsec).In(zone), Principal: s1, Groups: []string{s2, s3}, Session: s3,
			Tool: s2, Server: s1, ServerTool: s3, Decision: s1, Rule: s2, RuleSource: s3,
			Asked: len(s1) > 2, Answer: s2, ToolChange: s3, DurationMS: d, ResultBytes: size,
			IsError: len(s2) > 1, Error: s3, ArgsHMAC: s1, Args: a,
			Hooks:    []host.HookDecision{{Hook: s1, Phase: s2, Decision: s3, Reason: s1, Refused: len(s3) > 0, DurationMS: -d}},
			Findings: []string{s2}, Secrets: []string{s3, s1},
		}
		want, err := json.Marshal(e)
		got, ok := appendEntry(nil, e)
		switch {
		case ok && err != nil:
			t.Fatalf("appendEntry wrote %s; encoding/json: %v", got, err)
		case ok && !bytes.Equal(got, want):
			t.Fatalf("appendEntry wrote\n%s\nencoding/json\n%s", got, want)
		case !ok && err == nil:
			if _, off := e.Time.Zone(); off%60 == 0 {
				t.Fatalf("appendEntry declined what encoding/json writes: %s", want)
			}
		}
		// The arguments' canonical JSON, which their HMAC is of.
		if a != nil {
			want, err := json.Marshal(a)
			got, ok := appendValue(nil, a)
			if ok != (err == nil) || ok && !bytes.Equal(got, want) {
				t.Fatalf("appendValue wrote %s (%v); encoding/json %s (%v)", got, ok, want, err)
			}
		}
	})
}
