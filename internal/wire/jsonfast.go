package wire

import (
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Fast paths for decoding JSON that is known to be valid: the params of a
// Request and the results Call returns have been checked by the Conn. They
// skip encoding/json's reflection and its second validating pass. Each one
// decodes exactly as encoding/json would into the Go type it names, or
// reports false for a shape it does not handle (then the caller falls back
// to encoding/json, which stays the reference and produces its usual
// errors). On input that is not valid JSON they return false or garbage,
// but never panic.

// ObjectMembers calls fn for each member of the JSON object raw, in order,
// with the member's key as written (without its quotes; escape sequences
// are not decoded) and its raw value. It reports false, and stops, if raw is
// not an object, if a key holds an escape sequence, or when fn returns
// false.
func ObjectMembers(raw []byte, fn func(key, val []byte) bool) bool {
	i := skipWS(raw, 0)
	if i >= len(raw) || raw[i] != '{' {
		return false
	}
	i = skipWS(raw, i+1)
	for i < len(raw) && raw[i] == '"' {
		k := skipString(raw, i)
		if k > len(raw) || k-1 < i+1 {
			return false
		}
		key := raw[i+1 : k-1]
		if containsByte(key, '\\') {
			return false
		}
		i = skipWS(raw, k)
		if i >= len(raw) || raw[i] != ':' {
			return false
		}
		i = skipWS(raw, i+1)
		if i >= len(raw) {
			return false
		}
		end := skipValue(raw, i)
		if end <= i || end > len(raw) {
			return false
		}
		if !fn(key, raw[i:end]) {
			return false
		}
		i = skipWS(raw, end)
		if i < len(raw) && raw[i] == ',' {
			i = skipWS(raw, i+1)
		}
	}
	return i < len(raw) && raw[i] == '}'
}

// ArrayElements calls fn with each element of the JSON array raw, in order.
// It reports false, and stops, if raw is not an array or when fn returns
// false.
func ArrayElements(raw []byte, fn func(elem []byte) bool) bool {
	i := skipWS(raw, 0)
	if i >= len(raw) || raw[i] != '[' {
		return false
	}
	i = skipWS(raw, i+1)
	for i < len(raw) && raw[i] != ']' {
		end := skipValue(raw, i)
		if end <= i || end > len(raw) {
			return false
		}
		if !fn(raw[i:end]) {
			return false
		}
		i = skipWS(raw, end)
		if i < len(raw) && raw[i] == ',' {
			i = skipWS(raw, i+1)
		}
	}
	return i < len(raw)
}

// DecodeKey decodes an object key as ObjectMembers passes it (no escape
// sequences) into the string encoding/json would use as a map key.
func DecodeKey(key []byte) (string, bool) { return unquoteRaw(key) }

// IsNull reports whether the raw value is the literal null.
func IsNull(raw []byte) bool { return string(raw) == "null" }

// DecodeString decodes a JSON string as encoding/json decodes it into a
// string (invalid UTF-8 and lone surrogates become U+FFFD). It reports
// false if raw is not a string.
func DecodeString(raw []byte) (string, bool) {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return "", false
	}
	return unquoteRaw(raw[1 : len(raw)-1])
}

// DecodeBool decodes true or false.
func DecodeBool(raw []byte) (v, ok bool) {
	switch string(raw) {
	case "true":
		return true, true
	case "false":
		return false, true
	}
	return false, false
}

// DecodeUint64 decodes a JSON number into a uint64 as encoding/json does:
// only a plain decimal integer in range qualifies.
func DecodeUint64(raw []byte) (uint64, bool) {
	if len(raw) == 0 || raw[0] < '0' || raw[0] > '9' {
		return 0, false
	}
	n, err := strconv.ParseUint(string(raw), 10, 64)
	if err != nil {
		return 0, false
	}
	return n, true
}

// DecodeFloat64 decodes a JSON number into a float64 as encoding/json
// does.
func DecodeFloat64(raw []byte) (float64, bool) {
	if len(raw) == 0 || (raw[0] != '-' && (raw[0] < '0' || raw[0] > '9')) {
		return 0, false
	}
	f, err := strconv.ParseFloat(string(raw), 64)
	if err != nil {
		return 0, false
	}
	return f, true
}

// DecodeValue decodes any JSON value as encoding/json decodes it into an
// interface value: map[string]any, []any, float64, string, bool or nil. It
// reports false for a number out of the range of float64.
func DecodeValue(raw []byte) (any, bool) {
	i := skipWS(raw, 0)
	v, end, ok := decodeValueAt(raw, i)
	if !ok || skipWS(raw, end) != len(raw) {
		return nil, false
	}
	return v, true
}

// decodeValueAt decodes the value starting at i and returns the offset
// after it.
func decodeValueAt(data []byte, i int) (any, int, bool) {
	if i >= len(data) {
		return nil, i, false
	}
	switch c := data[i]; {
	case c == '"':
		end := skipString(data, i)
		if end > len(data) || end < i+2 {
			return nil, i, false
		}
		s, ok := unquoteRaw(data[i+1 : end-1])
		return s, end, ok
	case c == '{':
		m := make(map[string]any)
		i = skipWS(data, i+1)
		for i < len(data) && data[i] == '"' {
			k := skipString(data, i)
			if k > len(data) || k < i+2 {
				return nil, i, false
			}
			key, ok := unquoteRaw(data[i+1 : k-1])
			if !ok {
				return nil, i, false
			}
			i = skipWS(data, k)
			if i >= len(data) || data[i] != ':' {
				return nil, i, false
			}
			var v any
			if v, i, ok = decodeValueAt(data, skipWS(data, i+1)); !ok {
				return nil, i, false
			}
			m[key] = v
			i = skipWS(data, i)
			if i < len(data) && data[i] == ',' {
				i = skipWS(data, i+1)
			}
		}
		if i >= len(data) || data[i] != '}' {
			return nil, i, false
		}
		return m, i + 1, true
	case c == '[':
		a := make([]any, 0)
		i = skipWS(data, i+1)
		for i < len(data) && data[i] != ']' {
			v, j, ok := decodeValueAt(data, i)
			if !ok {
				return nil, j, false
			}
			a = append(a, v)
			i = skipWS(data, j)
			if i < len(data) && data[i] == ',' {
				i = skipWS(data, i+1)
			}
		}
		if i >= len(data) {
			return nil, i, false
		}
		return a, i + 1, true
	case c == 't' || c == 'f' || c == 'n':
		switch {
		case hasLiteral(data, i, "true"):
			return true, i + 4, true
		case hasLiteral(data, i, "false"):
			return false, i + 5, true
		case hasLiteral(data, i, "null"):
			return nil, i + 4, true
		}
		return nil, i, false
	case c == '-' || isDigit(c):
		end, ok := checkNumber(data, i)
		if !ok {
			return nil, end, false
		}
		f, err := strconv.ParseFloat(string(data[i:end]), 64)
		if err != nil {
			return nil, end, false
		}
		return f, end, true
	}
	return nil, i, false
}

// Struct fields. Each decodes a member's raw value into a field of the
// given type as encoding/json does (null leaves a string or a bool alone
// and sets a pointer, map or interface to nil) and reports false for a
// value of another type.

// StringField decodes into a string field.
func StringField(val []byte, dst *string) bool {
	if IsNull(val) {
		return true
	}
	s, ok := DecodeString(val)
	*dst = s
	return ok
}

// StringPtrField decodes into a *string field.
func StringPtrField(val []byte, dst **string) bool {
	if IsNull(val) {
		*dst = nil
		return true
	}
	s, ok := DecodeString(val)
	*dst = &s
	return ok
}

// BoolField decodes into a bool field.
func BoolField(val []byte, dst *bool) bool {
	if IsNull(val) {
		return true
	}
	b, ok := DecodeBool(val)
	*dst = b
	return ok
}

// Uint64PtrField decodes into a *uint64 field.
func Uint64PtrField(val []byte, dst **uint64) bool {
	if IsNull(val) {
		*dst = nil
		return true
	}
	n, ok := DecodeUint64(val)
	*dst = &n
	return ok
}

// Float64PtrField decodes into a *float64 field.
func Float64PtrField(val []byte, dst **float64) bool {
	if IsNull(val) {
		*dst = nil
		return true
	}
	f, ok := DecodeFloat64(val)
	*dst = &f
	return ok
}

// ValueField decodes into an interface (any) field.
func ValueField(val []byte, dst *any) bool {
	v, ok := DecodeValue(val)
	*dst = v
	return ok
}

// ObjectField decodes into a map[string]any field.
func ObjectField(val []byte, dst *map[string]any) bool {
	if IsNull(val) {
		*dst = nil
		return true
	}
	i := skipWS(val, 0)
	if i >= len(val) || val[i] != '{' {
		return false
	}
	v, ok := DecodeValue(val)
	m, isMap := v.(map[string]any)
	*dst = m
	return ok && isMap
}

// StringMapField decodes into a map[string]string field.
func StringMapField(val []byte, dst *map[string]string) bool {
	if IsNull(val) {
		*dst = nil
		return true
	}
	m := map[string]string{}
	*dst = m
	return ObjectMembers(val, func(key, v []byte) bool {
		k, kok := DecodeKey(key)
		s, ok := DecodeString(v)
		m[k] = s
		return kok && ok
	})
}

// AppendString appends s as a JSON string exactly as encoding/json writes
// it, with or without the escaping of <, > and & (json.Marshal escapes
// them; an Encoder can be told not to).
func AppendString(dst []byte, s string, escapeHTML bool) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		if b := s[i]; b < utf8.RuneSelf {
			if b >= 0x20 && b != '"' && b != '\\' && (!escapeHTML || (b != '<' && b != '>' && b != '&')) {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '\\', '"':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0xF])
			}
			i++
			start = i
			continue
		}
		c, size := utf8.DecodeRuneInString(s[i:])
		if c == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if c == '\u2028' || c == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[c&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

const hexDigits = "0123456789abcdef"

// AppendFloat appends f as encoding/json writes a float64. It reports false
// for NaN and the infinities, which JSON cannot carry.
func AppendFloat(dst []byte, f float64) ([]byte, bool) {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return dst, false
	}
	abs := math.Abs(f)
	format := byte('f')
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	dst = strconv.AppendFloat(dst, f, format, -1, 64)
	if format == 'e' {
		// clean up e-09 to e-9
		if n := len(dst); n >= 4 && dst[n-4] == 'e' && dst[n-3] == '-' && dst[n-2] == '0' {
			dst[n-2] = dst[n-1]
			dst = dst[:n-1]
		}
	}
	return dst, true
}

// AppendValue appends v as encoding/json writes it, for the values
// DecodeValue produces and a few more: nil, string, bool, float64, int,
// int64, uint64, map[string]any and []any, nested. It reports false for
// anything else (structs, other maps, json.Marshaler...), which the caller
// leaves to encoding/json.
func AppendValue(dst []byte, v any, escapeHTML bool) ([]byte, bool) {
	switch v := v.(type) {
	case nil:
		return append(dst, "null"...), true
	case string:
		return AppendString(dst, v, escapeHTML), true
	case bool:
		return strconv.AppendBool(dst, v), true
	case float64:
		return AppendFloat(dst, v)
	case int:
		return strconv.AppendInt(dst, int64(v), 10), true
	case int64:
		return strconv.AppendInt(dst, v, 10), true
	case uint64:
		return strconv.AppendUint(dst, v, 10), true
	case map[string]any:
		return AppendObject(dst, v, escapeHTML)
	case []any:
		if v == nil {
			return append(dst, "null"...), true
		}
		dst = append(dst, '[')
		for i, e := range v {
			if i > 0 {
				dst = append(dst, ',')
			}
			var ok bool
			if dst, ok = AppendValue(dst, e, escapeHTML); !ok {
				return dst, false
			}
		}
		return append(dst, ']'), true
	}
	return dst, false
}

// AppendObject appends m as encoding/json writes it: keys sorted, null for
// a nil map.
func AppendObject(dst []byte, m map[string]any, escapeHTML bool) ([]byte, bool) {
	if m == nil {
		return append(dst, "null"...), true
	}
	dst = append(dst, '{')
	var ok bool
	for i, k := range sortedKeys(m) {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(AppendString(dst, k, escapeHTML), ':')
		if dst, ok = AppendValue(dst, m[k], escapeHTML); !ok {
			return dst, false
		}
	}
	return append(dst, '}'), true
}

// AppendStringMap appends a map[string]string as encoding/json writes it.
func AppendStringMap(dst []byte, m map[string]string, escapeHTML bool) []byte {
	if m == nil {
		return append(dst, "null"...)
	}
	dst = append(dst, '{')
	for i, k := range sortedKeys(m) {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(AppendString(dst, k, escapeHTML), ':')
		dst = AppendString(dst, m[k], escapeHTML)
	}
	return append(dst, '}')
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, strings.Compare)
	return keys
}
