package wire

import (
	"encoding/json"
	"errors"
	"unicode/utf8"
)

// This file holds the single-pass envelope reader used on the hot path: a
// frame is validated once by json.Valid, and the envelope fields are then
// picked out of the validated bytes by a walk that only skips over payload
// values (json.Unmarshal would scan the frame twice, and a frame is mostly
// payload that wire only passes on).

func isWS(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func skipWS(data []byte, i int) int {
	for i < len(data) && isWS(data[i]) {
		i++
	}
	return i
}

// checkJSON reports whether data is exactly one JSON value, optionally
// surrounded by whitespace, as json.Valid does, with encoding/json's
// syntax error when it is not.
func checkJSON(data []byte) error {
	if json.Valid(data) {
		return nil
	}
	return json.Unmarshal(data, new(json.RawMessage))
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// checkNumber checks the number at i: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func checkNumber(data []byte, i int) (int, bool) {
	if data[i] == '-' {
		i++
	}
	switch {
	case i < len(data) && data[i] == '0':
		i++
	case i < len(data) && data[i] >= '1' && data[i] <= '9':
		for i < len(data) && isDigit(data[i]) {
			i++
		}
	default:
		return i, false
	}
	if i < len(data) && data[i] == '.' {
		i++
		if i >= len(data) || !isDigit(data[i]) {
			return i, false
		}
		for i < len(data) && isDigit(data[i]) {
			i++
		}
	}
	if i < len(data) && (data[i] == 'e' || data[i] == 'E') {
		i++
		if i < len(data) && (data[i] == '+' || data[i] == '-') {
			i++
		}
		if i >= len(data) || !isDigit(data[i]) {
			return i, false
		}
		for i < len(data) && isDigit(data[i]) {
			i++
		}
	}
	return i, true
}

func hasLiteral(data []byte, i int, lit string) bool {
	return len(data)-i >= len(lit) && string(data[i:i+len(lit)]) == lit
}

// skipValue returns the offset just after the value starting at i in
// data that checkJSON has accepted. It validates nothing.
func skipValue(data []byte, i int) int {
	switch data[i] {
	case '"':
		return skipString(data, i)
	case '{', '[':
		depth := 0
		for ; i < len(data); i++ {
			switch data[i] {
			case '"':
				i = skipString(data, i) - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
		}
		return i
	default: // number or literal
		for i < len(data) {
			switch data[i] {
			case ',', '}', ']', ' ', '\t', '\n', '\r':
				return i
			}
			i++
		}
		return i
	}
}

// skipString returns the offset after the closing quote of the valid string
// starting at i.
func skipString(data []byte, i int) int {
	for i++; i < len(data); i++ {
		switch data[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return i
}

// eachMember calls fn with the raw key (without quotes, still escaped) and
// raw value of each member of the valid object starting at i, in order.
func eachMember(data []byte, i int, fn func(key, val []byte)) {
	i = skipWS(data, i+1)
	for i < len(data) && data[i] == '"' {
		k := skipString(data, i)
		key := data[i+1 : k-1]
		i = skipWS(data, k)
		i = skipWS(data, i+1) // the colon
		end := skipValue(data, i)
		fn(key, data[i:end])
		i = skipWS(data, end)
		if i < len(data) && data[i] == ',' {
			i = skipWS(data, i+1)
		}
	}
}

// keyIs reports whether the raw key equals name once unescaped.
func keyIs(raw []byte, name string) bool {
	if string(raw) == name {
		return true
	}
	if len(raw) == len(name) || !containsByte(raw, '\\') {
		return false // escapes only make the raw form longer
	}
	s, ok := unquoteRaw(raw)
	return ok && s == name
}

func containsByte(b []byte, c byte) bool {
	for _, x := range b {
		if x == c {
			return true
		}
	}
	return false
}

// unquoteRaw unescapes the content of a valid JSON string. Plain ASCII and
// valid UTF-8 without escapes, the common case, converts directly; the rest
// goes through encoding/json so invalid UTF-8 is replaced the same way.
func unquoteRaw(raw []byte) (string, bool) {
	if !containsByte(raw, '\\') && utf8.Valid(raw) {
		return string(raw), true
	}
	q := make([]byte, 0, len(raw)+2)
	q = append(append(append(q, '"'), raw...), '"')
	var s string
	if err := json.Unmarshal(q, &s); err != nil {
		return "", false
	}
	return s, true
}

// errNotString marks a field that holds a JSON value other than a string or
// null.
var errNotString = errors.New("not a string")

// stringValue decodes a raw value that should be a string; null reads as "".
func stringValue(raw []byte) (string, error) {
	switch {
	case len(raw) == 0 || raw[0] == 'n':
		return "", nil
	case raw[0] != '"':
		return "", errNotString
	}
	s, ok := unquoteRaw(raw[1 : len(raw)-1])
	if !ok {
		return "", errNotString
	}
	return s, nil
}
