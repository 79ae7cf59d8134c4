// Package jsonvalue handles JSON values in their decoded form (what
// encoding/json decodes into an any: map[string]any, []any, string,
// float64, bool, nil, and json.Number).
package jsonvalue

// Clone deep-copies v: its objects and arrays are copied, every other
// value is immutable and shared. A nil object or array stays nil.
func Clone(v any) any {
	switch v := v.(type) {
	case map[string]any:
		return CloneObject(v)
	case []any:
		if v == nil {
			return v
		}
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = Clone(e)
		}
		return out
	}
	return v
}

// CloneObject deep-copies the object m (nil stays nil), so that whoever
// holds the copy cannot change what m's owner reports.
func CloneObject(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = Clone(v)
	}
	return out
}
