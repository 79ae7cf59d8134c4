package wire

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
)

var jsonValueCorpus = []string{
	`null`, `true`, `false`, `0`, `-0`, `1.5e3`, `-2.25E-7`, `12345678901234567890`, `1e400`, `-1e400`,
	`""`, `"plain"`, `"tab\tnl\n\"q\" \\ \/ \b\f\r"`, `"\u00e9\ud83d\ude00"`, `"\ud800"`, `"\udc00\ud800x"`, "\"bad \xff\xfe utf8\"",
	`"é ü 日本"`, "\"\u2028\u2029\"", `"<a href='x'>&amp;</a>"`,
	`[]`, `{}`, `[1,"a",null,[],{}]`, ` { "a" : [ 1 , 2 ] , "b" : { "c" : null } } `,
	`{"a":1,"a":2}`, `{"k\u0065y":"v","k\ud800":1}`, "{\"k\xff\":1}",
	`[[[[[[[[[[]]]]]]]]]]`,
}

// TestDecodeValueMatchesJSON: DecodeValue decodes as encoding/json does
// into an interface value, or declines.
func TestDecodeValueMatchesJSON(t *testing.T) {
	for _, doc := range jsonValueCorpus {
		checkDecodeValue(t, []byte(doc))
	}
}

func FuzzDecodeValue(f *testing.F) {
	for _, doc := range jsonValueCorpus {
		f.Add([]byte(doc))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		if checkJSON(doc) != nil {
			// Not valid JSON: only promise not to panic.
			DecodeValue(doc)
			ObjectMembers(doc, func(k, v []byte) bool { return true })
			ArrayElements(doc, func(v []byte) bool { return true })
			return
		}
		checkDecodeValue(t, doc)
	})
}

func checkDecodeValue(t *testing.T, doc []byte) {
	t.Helper()
	var ref any
	refErr := json.Unmarshal(doc, &ref)
	got, ok := DecodeValue(doc)
	if !ok {
		if refErr == nil {
			t.Fatalf("%q: DecodeValue declined what encoding/json decodes", doc)
		}
		return
	}
	if refErr != nil {
		t.Fatalf("%q: DecodeValue decoded what encoding/json rejects: %v", doc, refErr)
	}
	if !reflect.DeepEqual(ref, got) {
		t.Fatalf("%q: DecodeValue = %#v, encoding/json = %#v", doc, got, ref)
	}
	if s, ok := DecodeString(bytes.TrimSpace(doc)); ok && s != ref {
		t.Fatalf("%q: DecodeString = %q, encoding/json = %q", doc, s, ref)
	}
}

func TestObjectMembers(t *testing.T) {
	var keys, vals []string
	ok := ObjectMembers([]byte(` { "a" : 1 , "b":{"x":[1,{"y":"}"}]} ,"c":"s\"}" } `), func(k, v []byte) bool {
		keys, vals = append(keys, string(k)), append(vals, string(v))
		return true
	})
	if !ok || !reflect.DeepEqual(keys, []string{"a", "b", "c"}) || !reflect.DeepEqual(vals, []string{"1", `{"x":[1,{"y":"}"}]}`, `"s\"}"`}) {
		t.Fatalf("ok %v keys %q vals %q", ok, keys, vals)
	}
	if ObjectMembers([]byte(`{"k\u0065y":1}`), func(k, v []byte) bool { return true }) {
		t.Error("escaped key accepted")
	}
	if ObjectMembers([]byte(`[1]`), func(k, v []byte) bool { return true }) {
		t.Error("array accepted as object")
	}
	if ObjectMembers([]byte(`{"a":1,"b":2}`), func(k, v []byte) bool { return string(k) != "b" }) {
		t.Error("fn's false ignored")
	}
	var elems []string
	if !ArrayElements([]byte(` [ 1 , "a,]" , [2,3] , {} ] `), func(v []byte) bool { elems = append(elems, string(v)); return true }) ||
		!reflect.DeepEqual(elems, []string{"1", `"a,]"`, "[2,3]", "{}"}) {
		t.Fatalf("elems %q", elems)
	}
}

func TestNumberDecoders(t *testing.T) {
	for _, tc := range []struct {
		in string
		u  uint64
		ok bool
	}{{"0", 0, true}, {"18446744073709551615", 1<<64 - 1, true}, {"18446744073709551616", 0, false}, {"-1", 0, false}, {"1.0", 0, false}, {"1e3", 0, false}, {`"1"`, 0, false}} {
		var ref uint64
		refErr := json.Unmarshal([]byte(tc.in), &ref)
		u, ok := DecodeUint64([]byte(tc.in))
		if ok != tc.ok || u != tc.u || ok != (refErr == nil) || (ok && ref != u) {
			t.Errorf("DecodeUint64(%s) = %d, %v; encoding/json %d, %v", tc.in, u, ok, ref, refErr)
		}
	}
	for _, in := range []string{"0", "-0", "1.5", "-2e-9", "1e308", "1e309", "123456789012345678901234567890"} {
		var ref float64
		refErr := json.Unmarshal([]byte(in), &ref)
		f, ok := DecodeFloat64([]byte(in))
		if ok != (refErr == nil) || (ok && f != ref) {
			t.Errorf("DecodeFloat64(%s) = %v, %v; encoding/json %v, %v", in, f, ok, ref, refErr)
		}
	}
}

func TestAppendStringMatchesJSON(t *testing.T) {
	for _, s := range []string{"", "plain", "tab\t\"q\" \\ / \b\f\n\r\x00\x1f\x7f", "<a>&amp;</a>", "é 日本 \U0001F600", "\u2028\u2029", "bad \xff\xfe", "\xed\xa0\x80"} {
		want, _ := json.Marshal(s)
		if got := AppendString(nil, s, true); string(got) != string(want) {
			t.Errorf("AppendString(%q, html) = %s, json.Marshal %s", s, got, want)
		}
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		enc.Encode(s)
		if got := AppendString(nil, s, false); string(got)+"\n" != buf.String() {
			t.Errorf("AppendString(%q) = %s, Encoder %s", s, got, buf.String())
		}
	}
}

// TestAppendValueMatchesJSON: AppendValue writes what encoding/json writes
// for the values DecodeValue produces, with and without HTML escaping.
func TestAppendValueMatchesJSON(t *testing.T) {
	values := []any{nil, "s<&>", true, 1.5, -0.0000001, 1e21, 123456789.0, 3, int64(-4), uint64(5),
		map[string]any{"b": []any{1.0, "x", nil, map[string]any{}}, "a": map[string]any{"z": false}},
		[]any(nil), map[string]any(nil), []any{}}
	for _, doc := range jsonValueCorpus {
		if v, ok := DecodeValue([]byte(doc)); ok {
			values = append(values, v)
		}
	}
	for _, v := range values {
		want, werr := json.Marshal(v)
		got, ok := AppendValue(nil, v, true)
		if ok != (werr == nil) || (ok && string(got) != string(want)) {
			t.Errorf("AppendValue(%#v, html) = %s, %v; json.Marshal %s, %v", v, got, ok, want, werr)
		}
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		werr = enc.Encode(v)
		got, ok = AppendValue(nil, v, false)
		if ok != (werr == nil) || (ok && string(got)+"\n" != buf.String()) {
			t.Errorf("AppendValue(%#v) = %s, %v; Encoder %s, %v", v, got, ok, buf.String(), werr)
		}
	}
	if _, ok := AppendValue(nil, struct{}{}, true); ok {
		t.Error("a struct is left to encoding/json")
	}
}
