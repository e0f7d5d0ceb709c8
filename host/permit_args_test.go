package host

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// decoderArgs is how permit decoded and re-encoded a call's arguments
// before permitArgs: an encoding/json Decoder with UseNumber, then
// json.Marshal. permitArgs must agree with it.
func decoderArgs(raw []byte) (map[string]any, json.RawMessage) {
	var m map[string]any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if dec.Decode(&m) != nil || m == nil {
		return nil, raw
	}
	canon, err := json.Marshal(m)
	if err != nil {
		return m, raw
	}
	return m, canon
}

// permitArgsCases are arguments whose decoding could differ: exact
// numbers, keys given twice (at the top and nested), escapes, invalid
// UTF-8 and lone surrogates, HTML characters, non-objects.
var permitArgsCases = []string{
	`{"text":"hello switchboard"}`,
	`{}`,
	`null`,
	` { "a" : 1 } `,
	`{"n":1.000000000000000000001,"big":123456789012345678901234567890,"e":1E+400,"neg":-0,"f":1.5e-7}`,
	`{"text":"first","text":"second"}`,
	`{"a":{"x":1,"x":2},"a":{"y":[1,{"z":3,"z":4}]}}`,
	`{"s":"\u00e9\ud83d\ude00\n\t\"\\\/"}`,
	`{"lone":"\ud800","lone2":"\udc00x","pair":"\ud800\udc00"}`,
	"{\"bad\":\"\xff\xfe\",\"k\xc3\":1}",
	`{"html":"<a href='x'>&amp;</a>","ls":"\u2028\u2029"}`,
	`{"ctl":"\b\f\n\r\t\u0000\u0001\u001f\u007f\u0080\ufeff\uffff","\u0000k":"\ud83d"}`,
	`{"b":1,"a":2,"":3,"aa":4,"A":5,"\u00e9":6,"\ud83d\ude00":7,"\uffff":8}`,
	`{"é":1,"e":2,"E":3}`,
	`{"nested":[[[[{"deep":true}]]]],"b":false,"z":null}`,
	`[1,2,3]`,
	`"a string"`,
	`42`,
	`true`,
	`{"a":1}   `,
	`{"a":1} {"b":2}`,
	`{"a":}`,
	`{"a":1,}`,
	`{'a':1}`,
	``,
	`{"a":01}`,
	`{"a":1.}`,
	`{"a":"\x01"}`,
	"{\"a\":\"\x01\"}",
	strings.Repeat(`{"a":`, 200) + `1` + strings.Repeat(`}`, 200),
	`{"a":` + strings.Repeat(`[`, 999) + `{"n":1.50,"n":2}` + strings.Repeat(`]`, 999) + `}`,
	`{"a":` + strings.Repeat(`[`, 1000) + `{"n":1.50,"n":2}` + strings.Repeat(`]`, 1000) + `}`,
	strings.Repeat(`[`, 10001) + strings.Repeat(`]`, 10001),
	`{"a":` + strings.Repeat(`[`, 9999) + strings.Repeat(`]`, 9999) + `}`,
	`{"a":` + strings.Repeat(`[`, 10000) + strings.Repeat(`]`, 10000) + `}`,
	`{"a":"` + strings.Repeat(`[\"`, 10001) + `"}`,
}

// TestPermitArgsAgrees: on the cases above, permitArgs decodes and
// re-encodes as the json.Decoder it replaces.
func TestPermitArgsAgrees(t *testing.T) {
	for _, c := range permitArgsCases {
		checkPermitArgs(t, []byte(c))
	}
}

// TestPermitArgsNumbersAndDuplicates pins what the rules see and what is
// sent, without reference to the old decoding: numbers keep their text,
// the last of a repeated key wins in both, and a non-object is sent
// unchanged with no named arguments.
func TestPermitArgsNumbersAndDuplicates(t *testing.T) {
	m, canon := permitArgs([]byte(`{"text":"first","n":1.000000000000000000001,"text":"second"}`))
	if m["text"] != "second" || m["n"] != json.Number("1.000000000000000000001") {
		t.Errorf("decoded %#v", m)
	}
	if want := `{"n":1.000000000000000000001,"text":"second"}`; string(canon) != want {
		t.Errorf("sent %s, want %s", canon, want)
	}
	for _, raw := range []string{`[1]`, `"x"`, `null`} {
		if m, canon := permitArgs([]byte(raw)); m != nil || string(canon) != raw {
			t.Errorf("%s: decoded %#v, sent %s", raw, m, canon)
		}
	}
}

// TestPermitArgsCopies: what the rules see does not share memory with
// the request's bytes, which the caller may reuse.
func TestPermitArgsCopies(t *testing.T) {
	raw := []byte(`{"text":"hello","n":12}`)
	m, _ := permitArgs(raw)
	for i := range raw {
		raw[i] = ' '
	}
	if m["text"] != "hello" || m["n"] != json.Number("12") {
		t.Errorf("after the input changed, decoded %#v", m)
	}
}

func checkPermitArgs(t *testing.T, raw []byte) {
	t.Helper()
	wantArgs, wantSent := decoderArgs(raw)
	gotArgs, gotSent := permitArgs(raw)
	if !reflect.DeepEqual(gotArgs, wantArgs) {
		t.Errorf("%s: permitArgs decoded %s, json.Decoder %s", short(raw), short(fmt.Sprintf("%#v", gotArgs)), short(fmt.Sprintf("%#v", wantArgs)))
	}
	if !bytes.Equal(gotSent, wantSent) {
		t.Errorf("%s: permitArgs sends %s, json.Decoder %s", short(raw), short(gotSent), short(wantSent))
	}
}

// short quotes s, cut to 200 bytes.
func short[T ~string | ~[]byte](s T) string {
	if len(s) > 200 {
		return fmt.Sprintf("%q… (%d bytes)", s[:200], len(s))
	}
	return fmt.Sprintf("%q", s)
}

// FuzzPermitArgs checks permitArgs against the json.Decoder it replaced,
// on valid JSON (permit only ever decodes what argsJSON returns: JSON
// that json.Valid accepts, or json.Marshal's output):
//
//	go test ./host -run '^$' -fuzz FuzzPermitArgs -fuzztime 60s
func FuzzPermitArgs(f *testing.F) {
	for _, c := range permitArgsCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		if !json.Valid(raw) {
			t.Skip()
		}
		checkPermitArgs(t, raw)
	})
}

// BenchmarkPermitArgs is the argument handling of permit for one call
// (the echo benchmark's arguments, and a larger object): decoding for the
// rules and re-encoding what is sent, by permitArgs and by the
// json.Decoder it replaced.
//
//	go test ./host -run '^$' -bench PermitArgs -benchmem
func BenchmarkPermitArgs(b *testing.B) {
	cases := []struct{ name, raw string }{
		{"echo", `{"text":"hello switchboard"}`},
		{"larger", `{"path":"/tmp/a/b.txt","content":"` + strings.Repeat("lorem ipsum ", 40) +
			`","options":{"create":true,"mode":420,"tags":["a","b","c"]},"limit":100}`},
	}
	for _, c := range cases {
		raw := []byte(c.raw)
		for _, impl := range []struct {
			name string
			f    func([]byte) (map[string]any, json.RawMessage)
		}{{"parse", permitArgs}, {"decoder", decoderArgs}} {
			b.Run(c.name+"/"+impl.name, func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					impl.f(raw)
				}
			})
		}
	}
}
