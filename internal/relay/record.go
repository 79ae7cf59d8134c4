package relay

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"time"
	"unicode/utf8"
)

// ATOF event kinds and scope categories (ATOF 0.1).
const (
	KindScope  = "scope"
	KindMark   = "mark"
	ScopeStart = "start"
	ScopeEnd   = "end"
)

// Record is one parsed ATOF record. The typed fields are the ATOF 0.1
// envelope; Extra keeps every other field, and Object returns the record
// exactly as it was decoded (numbers as json.Number), so nothing the
// producer sent is lost.
//
// A field whose value has an unexpected JSON type (a numeric "uuid", say)
// leaves its typed field empty and is kept in Extra instead.
type Record struct {
	Kind            string         // "scope" or "mark" (others are kept, ATOF may add kinds)
	ScopeCategory   string         // "start" or "end" on scope records
	ATOFVersion     string         // "MAJOR.MINOR"
	UUID            string         // shared by a scope's start and end
	ParentUUID      string         // empty when null or absent
	Name            string         // human-readable label
	Timestamp       any            // RFC 3339 string or json.Number epoch microseconds, as sent
	Attributes      []string       // behavioural flags (scope records)
	Category        string         // llm, tool, agent, ..., custom, unknown
	CategoryProfile map[string]any // category-specific fields; nil when null or absent
	Data            any            // opaque payload
	DataSchema      any            // opaque {name, version}
	Metadata        map[string]any // correlation envelope; nil when null or absent
	Extra           map[string]any // fields ATOF 0.1 does not define, or known fields with unexpected types

	// Size is the record's length in bytes on the wire (one NDJSON line,
	// without surrounding whitespace).
	Size int

	obj map[string]any
}

// ErrMalformed is wrapped by ParseRecord's errors.
var ErrMalformed = errors.New("relay: malformed ATOF record")

// ParseRecord parses one NDJSON line into a Record. The line must be valid
// UTF-8 and hold exactly one JSON object; surrounding whitespace is
// ignored.
func ParseRecord(line []byte) (*Record, error) {
	line = bytes.TrimSpace(line)
	if len(line) == 0 || line[0] != '{' {
		return nil, malformed("not a JSON object")
	}
	if !utf8.Valid(line) {
		return nil, malformed("not valid UTF-8")
	}
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.UseNumber()
	var obj map[string]any
	if err := dec.Decode(&obj); err != nil {
		return nil, malformed("invalid JSON")
	}
	if dec.InputOffset() != int64(len(line)) {
		return nil, malformed("data after the JSON object")
	}
	if obj == nil { // cannot happen after the '{' check, but be certain
		return nil, malformed("not a JSON object")
	}
	r := &Record{Size: len(line), obj: obj}
	for k, v := range obj {
		if !r.set(k, v) {
			if r.Extra == nil {
				r.Extra = make(map[string]any)
			}
			r.Extra[k] = v
		}
	}
	return r, nil
}

func malformed(why string) error { return &parseError{why} }

type parseError struct{ why string }

func (e *parseError) Error() string { return "relay: malformed ATOF record: " + e.why }
func (e *parseError) Unwrap() error { return ErrMalformed }

// set stores a known field; false means keep it in Extra.
func (r *Record) set(k string, v any) bool {
	str := func(dst *string) bool {
		s, ok := v.(string)
		if ok {
			*dst = s
		}
		return ok
	}
	obj := func(dst *map[string]any) bool {
		if v == nil {
			return true
		}
		m, ok := v.(map[string]any)
		if ok {
			*dst = m
		}
		return ok
	}
	switch k {
	case "kind":
		return str(&r.Kind)
	case "scope_category":
		return str(&r.ScopeCategory)
	case "atof_version":
		return str(&r.ATOFVersion)
	case "uuid":
		return str(&r.UUID)
	case "parent_uuid":
		return v == nil || str(&r.ParentUUID)
	case "name":
		return str(&r.Name)
	case "category":
		return v == nil || str(&r.Category)
	case "timestamp":
		switch v.(type) {
		case string, json.Number:
			r.Timestamp = v
			return true
		}
		return false
	case "attributes":
		if v == nil {
			return true
		}
		list, ok := v.([]any)
		if !ok {
			return false
		}
		out := make([]string, 0, len(list))
		for _, x := range list {
			s, ok := x.(string)
			if !ok {
				return false
			}
			out = append(out, s)
		}
		r.Attributes = out
		return true
	case "category_profile":
		return obj(&r.CategoryProfile)
	case "metadata":
		return obj(&r.Metadata)
	case "data":
		r.Data = v
		return true
	case "data_schema":
		r.DataSchema = v
		return true
	}
	return false
}

// Object returns the record as decoded: every field, numbers as
// json.Number. The map is shared; do not modify it.
func (r *Record) Object() map[string]any { return r.obj }

// IsScopeStart reports whether r opens a scope.
func (r *Record) IsScopeStart() bool { return r.Kind == KindScope && r.ScopeCategory == ScopeStart }

// IsScopeEnd reports whether r closes a scope.
func (r *Record) IsScopeEnd() bool { return r.Kind == KindScope && r.ScopeCategory == ScopeEnd }

// Time returns the record's timestamp: an RFC 3339 string or integer epoch
// microseconds (ATOF 0.1 §5.1). ok is false when it is absent or neither.
func (r *Record) Time() (t time.Time, ok bool) {
	switch ts := r.Timestamp.(type) {
	case string:
		t, err := time.Parse(time.RFC3339Nano, ts)
		return t, err == nil
	case json.Number:
		if us, err := ts.Int64(); err == nil {
			return time.UnixMicro(us), true
		}
		f, err := ts.Float64()
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || math.Abs(f) > 1<<62 {
			return time.Time{}, false
		}
		return time.UnixMicro(int64(f)), true
	}
	return time.Time{}, false
}

// metaString returns metadata[key] when it is a string.
func (r *Record) metaString(key string) (string, bool) {
	s, ok := r.Metadata[key].(string)
	return s, ok
}

// metaInt reports whether metadata[key] is a JSON number equal to n.
func (r *Record) metaIntEquals(key string, n int) bool {
	num, ok := r.Metadata[key].(json.Number)
	if !ok {
		return false
	}
	if i, err := num.Int64(); err == nil {
		return i == int64(n)
	}
	f, err := num.Float64()
	return err == nil && f == float64(n)
}
