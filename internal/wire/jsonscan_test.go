package wire

import (
	"encoding/json"
	"strings"
	"testing"
)

var jsonValidityCases = []string{
	``, ` `, `{}`, `[]`, `""`, `0`, `-0`, `1.5e3`, `-1E-7`, `true`, `false`, `null`,
	` {"a" : [1, 2, {"b": null}], "c": "\u00e9\n\"\\\/\b\f\r\t"} `,
	`{"a":1,}`, `[1,]`, `[1 2]`, `{"a" 1}`, `{1:2}`, `{"a":}`, `{`, `[`, `"abc`, `"\x"`, `"\u12"`, `"\u12G4"`,
	"\"a\tb\"", "\"\x7f\xff\"", `01`, `-`, `1.`, `.5`, `1e`, `1e+`, `+1`, `tru`, `nul`, `truex`, `[true false]`,
	`{} {}`, `{}x`, `[][]`, `"\ud800"`, "\x00", `[[[[]]]]`, `{"a":{"b":{"c":[]}}}`, `[-]`, `[--1]`, `{"a":"b":"c"}`,
	"\t\r\n[1]\n", `[1,[2,[3]],4]`, `{"":""}`, `NaN`, `Infinity`, `1e1000`, `"` + strings.Repeat("é", 50) + `"`,
	strings.Repeat("[", maxDepth) + strings.Repeat("]", maxDepth),
	strings.Repeat("[", maxDepth+1) + strings.Repeat("]", maxDepth+1),
	strings.Repeat("[", maxDepth) + "{}" + strings.Repeat("]", maxDepth),
	strings.Repeat(`{"a":`, maxDepth) + "1" + strings.Repeat("}", maxDepth),
}

func TestCheckJSONMatchesStdlib(t *testing.T) {
	for _, s := range jsonValidityCases {
		want := json.Valid([]byte(s))
		err := checkJSON([]byte(s))
		if (err == nil) != want {
			t.Errorf("checkJSON(%.60q) = %v, json.Valid = %v", s, err, want)
		}
	}
}

func FuzzJSONValid(f *testing.F) {
	for _, s := range jsonValidityCases {
		if len(s) < 1000 {
			f.Add([]byte(s))
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		want := json.Valid(data)
		err := checkJSON(data)
		if (err == nil) != want {
			t.Fatalf("checkJSON = %v, json.Valid = %v", err, want)
		}
		if !want {
			return
		}
		// skipValue agrees with the scanner on where the value ends, and
		// object members are the ones encoding/json sees.
		i := skipWS(data, 0)
		if end := skipWS(data, skipValue(data, i)); end != len(data) {
			t.Fatalf("skipValue stopped at %d of %d", end, len(data))
		}
		if data[i] != '{' {
			return
		}
		var ref map[string]json.RawMessage
		if err := json.Unmarshal(data, &ref); err != nil {
			t.Fatal(err)
		}
		got := map[string]json.RawMessage{}
		eachMember(data, i, func(key, val []byte) {
			k, ok := unquoteRaw(key)
			if !ok {
				t.Fatalf("key %q does not unquote", key)
			}
			got[k] = val
		})
		if len(got) != len(ref) {
			t.Fatalf("%d members, encoding/json sees %d", len(got), len(ref))
		}
		for k, v := range ref {
			if string(got[k]) != string(v) {
				t.Fatalf("member %q = %s, encoding/json sees %s", k, got[k], v)
			}
			var want string
			werr := json.Unmarshal(v, &want)
			s, err := stringValue(v)
			if (werr == nil) != (err == nil) || s != want {
				t.Fatalf("stringValue(%s) = %q, %v; encoding/json: %q, %v", v, s, err, want, werr)
			}
		}
	})
}

func BenchmarkCheckJSON(b *testing.B) {
	data := []byte(benchInvokePayload)
	b.Run("checkJSON", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			if checkJSON(data) != nil {
				b.Fatal("invalid")
			}
		}
	})
	b.Run("json.Valid", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			if !json.Valid(data) {
				b.Fatal("invalid")
			}
		}
	})
}
