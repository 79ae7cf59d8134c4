package config

import (
	"encoding/json"
	"strconv"
	"strings"
)

// Limits on what a config may be.
const (
	// MaxConfigSize is the largest config file, in bytes, that is read.
	MaxConfigSize = 1 << 20
	// maxDepth bounds the nesting of objects and arrays.
	maxDepth = 1000
	// maxAliasValues bounds how many values YAML aliases may add by
	// expansion, so that a small file cannot expand into a huge one.
	maxAliasValues = 100_000
)

// kind is the JSON type of a value.
type kind uint8

const (
	kindNull kind = iota
	kindBool
	kindNumber
	kindString
	kindArray
	kindObject
)

// String names the kind in messages.
func (k kind) String() string {
	switch k {
	case kindBool:
		return "a boolean"
	case kindNumber:
		return "a number"
	case kindString:
		return "a string"
	case kindArray:
		return "a list"
	case kindObject:
		return "an object"
	}
	return "null"
}

// value is a parsed JSON value that remembers its line. YAML and JSON are
// both read into values, checked, and only then decoded into the contract
// types, so that every problem can be reported at its path and line.
type value struct {
	kind    kind
	line    int    // 1-based; 0 when unknown
	text    string // a string, or a number literal in JSON syntax
	integer bool   // the number was written as an integer
	boolean bool
	items   []*value
	members []member // in document order, keys unique
}

// member is one key of an object.
type member struct {
	key     string
	keyLine int
	value   *value
}

// get returns the member value named key, or nil.
func (v *value) get(key string) *value {
	for _, m := range v.members {
		if m.key == key {
			return m.value
		}
	}
	return nil
}

// appendJSON appends v encoded as JSON.
func (v *value) appendJSON(b []byte) []byte {
	switch v.kind {
	case kindBool:
		return strconv.AppendBool(b, v.boolean)
	case kindNumber:
		return append(b, v.text...)
	case kindString:
		return appendString(b, v.text)
	case kindArray:
		b = append(b, '[')
		for i, it := range v.items {
			if i > 0 {
				b = append(b, ',')
			}
			b = it.appendJSON(b)
		}
		return append(b, ']')
	case kindObject:
		b = append(b, '{')
		for i, m := range v.members {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(b, m.key)
			b = append(b, ':')
			b = m.value.appendJSON(b)
		}
		return append(b, '}')
	}
	return append(b, "null"...)
}

func appendString(b []byte, s string) []byte {
	enc, _ := json.Marshal(s) // marshalling a string cannot fail
	return append(b, enc...)
}

// childPath is the dotted path of key below parent. Keys that are not
// plain words are quoted: models["gpt-4.1"].
func childPath(parent, key string) string {
	if !plainKey(key) {
		return parent + "[" + strconv.Quote(key) + "]"
	}
	if parent == "" {
		return key
	}
	return parent + "." + key
}

// indexPath is the path of element i of the list at parent.
func indexPath(parent string, i int) string {
	return parent + "[" + strconv.Itoa(i) + "]"
}

func plainKey(key string) bool {
	if key == "" {
		return false
	}
	return strings.IndexFunc(key, func(r rune) bool {
		return !(r == '_' || r == '-' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9')
	}) < 0
}
