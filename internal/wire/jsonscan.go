package wire

import (
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf8"
)

// This file holds the single-pass envelope reader used on the hot path.
// json.Unmarshal scans every frame twice (once to validate, once to decode),
// and a frame is mostly payload that wire only passes on. Here a frame is
// validated once by a table-driven scanner that accepts exactly what
// json.Valid accepts (FuzzJSONValid checks this), and the envelope fields
// are then picked out of the validated bytes by a walk that only skips over
// payload values.

// maxDepth is encoding/json's nesting limit, kept so that both accept the
// same documents.
const maxDepth = 10000

// strSafe[c] is true for bytes that may appear unescaped inside a string
// without ending it.
var strSafe = func() (t [256]bool) {
	for c := 0x20; c < 256; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// syntaxError reports invalid JSON at byte offset Offset.
type syntaxError struct {
	Offset int
	msg    string
}

func (e *syntaxError) Error() string {
	return fmt.Sprintf("%s at offset %d", e.msg, e.Offset)
}

func isWS(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func skipWS(data []byte, i int) int {
	for i < len(data) && isWS(data[i]) {
		i++
	}
	return i
}

// checkJSON reports whether data is exactly one JSON value, optionally
// surrounded by whitespace, with the same verdict as json.Valid.
func checkJSON(data []byte) error {
	var stackBuf [32]byte
	stack := stackBuf[:0] // open containers: '{' or '['
	i := skipWS(data, 0)
	bad := func(msg string) error { return &syntaxError{Offset: i, msg: msg} }
	for {
		// A value starts at i.
		if i >= len(data) {
			return bad("unexpected end of JSON input")
		}
		switch c := data[i]; {
		case c == '{' || c == '[':
			if len(stack) >= maxDepth {
				return bad("exceeded max depth")
			}
			i = skipWS(data, i+1)
			if i < len(data) && data[i] == c+2 { // '}' or ']'
				i++
				break
			}
			stack = append(stack, c)
			if c == '{' {
				var err error
				if i, err = checkKey(data, i); err != nil {
					return err
				}
			}
			continue
		case c == '"':
			j, err := checkString(data, i)
			if err != nil {
				return err
			}
			i = j
		case c == '-' || (c >= '0' && c <= '9'):
			j, ok := checkNumber(data, i)
			if !ok {
				i = j
				return bad("invalid number")
			}
			i = j
		case c == 't':
			if !hasLiteral(data, i, "true") {
				return bad("invalid literal")
			}
			i += 4
		case c == 'f':
			if !hasLiteral(data, i, "false") {
				return bad("invalid literal")
			}
			i += 5
		case c == 'n':
			if !hasLiteral(data, i, "null") {
				return bad("invalid literal")
			}
			i += 4
		default:
			return bad("invalid character looking for beginning of value")
		}
		// After a value: close containers or move to the next element.
		for {
			i = skipWS(data, i)
			if len(stack) == 0 {
				if i != len(data) {
					return bad("invalid character after top-level value")
				}
				return nil
			}
			if i >= len(data) {
				return bad("unexpected end of JSON input")
			}
			top := stack[len(stack)-1]
			if data[i] == top+2 {
				stack = stack[:len(stack)-1]
				i++
				continue
			}
			if data[i] != ',' {
				return bad("invalid character after element")
			}
			i = skipWS(data, i+1)
			if top == '{' {
				var err error
				if i, err = checkKey(data, i); err != nil {
					return err
				}
			}
			break
		}
	}
}

// checkKey checks `"key" :` at i and returns the offset after the colon and
// any whitespace.
func checkKey(data []byte, i int) (int, error) {
	if i >= len(data) || data[i] != '"' {
		return i, &syntaxError{Offset: i, msg: "expected object key"}
	}
	i, err := checkString(data, i)
	if err != nil {
		return i, err
	}
	i = skipWS(data, i)
	if i >= len(data) || data[i] != ':' {
		return i, &syntaxError{Offset: i, msg: "expected colon after object key"}
	}
	return skipWS(data, i+1), nil
}

// checkString checks the string starting with the quote at i and returns the
// offset after its closing quote.
func checkString(data []byte, i int) (int, error) {
	j := i + 1
	for {
		for j < len(data) && strSafe[data[j]] {
			j++
		}
		if j >= len(data) {
			return j, &syntaxError{Offset: j, msg: "unexpected end of string"}
		}
		switch data[j] {
		case '"':
			return j + 1, nil
		case '\\':
			if j+1 >= len(data) {
				return j, &syntaxError{Offset: j, msg: "unexpected end of string"}
			}
			switch data[j+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				j += 2
			case 'u':
				if j+6 > len(data) || !isHex(data[j+2]) || !isHex(data[j+3]) || !isHex(data[j+4]) || !isHex(data[j+5]) {
					return j, &syntaxError{Offset: j, msg: "invalid \\u escape"}
				}
				j += 6
			default:
				return j, &syntaxError{Offset: j, msg: "invalid escape"}
			}
		default: // a control character
			return j, &syntaxError{Offset: j, msg: "control character in string"}
		}
	}
}

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
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
