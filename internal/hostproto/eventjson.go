package hostproto

import (
	"bytes"
	"encoding/json"
	"strconv"

	"github.com/fabric-runtime/fabric/internal/wire"
)

// AppendJSON encodes p without reflection (wire.JSONAppender), exactly as
// encoding/json does with HTML escaping off: events are the most frequent
// message of a turn. Values it leaves to encoding/json (see
// wire.AppendValue) take the reflective path.
func (p *EventParams) AppendJSON(dst []byte) ([]byte, error) {
	if b, ok := appendEventParams(dst, p); ok {
		return b, nil
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(p); err != nil {
		return dst, err
	}
	return append(dst, bytes.TrimSuffix(buf.Bytes(), []byte("\n"))...), nil
}

func appendEventParams(dst []byte, p *EventParams) ([]byte, bool) {
	dst = append(dst, `{"invocation_id":`...)
	dst = wire.AppendString(dst, p.InvocationID, false)
	dst = append(dst, `,"event":{"kind":`...)
	e := &p.Event
	dst = wire.AppendString(dst, e.Kind, false)
	if e.Message != "" {
		dst = append(dst, `,"message":`...)
		dst = wire.AppendString(dst, e.Message, false)
	}
	if e.TimestampMillis != 0 {
		dst = append(dst, `,"timestamp_millis":`...)
		dst = strconv.AppendInt(dst, e.TimestampMillis, 10)
	}
	if len(e.Metadata) > 0 {
		dst = append(dst, `,"metadata":`...)
		var ok bool
		if dst, ok = wire.AppendObject(dst, e.Metadata, false); !ok {
			return dst, false
		}
	}
	return append(dst, "}}"...), true
}

// DecodeEventParams decodes raw into p without reflection when it can,
// falling back to encoding/json (which also gives the errors). raw must be
// a single JSON value, as wire delivers a message's params (the fast path
// does not look past the end of the object).
func DecodeEventParams(raw []byte, p *EventParams) error {
	var fast EventParams
	if fastEventParams(raw, &fast) {
		*p = fast
		return nil
	}
	return json.Unmarshal(raw, p)
}

// fastEventParams accepts only what encoding/json would decode to the same
// value; anything else (repeated keys, numbers of another form, unknown
// shapes) reports false and goes to the fallback.
func fastEventParams(raw []byte, p *EventParams) bool {
	var seen uint8
	first := func(bit uint8) bool {
		if seen&(1<<bit) != 0 {
			return false
		}
		seen |= 1 << bit
		return true
	}
	return wire.ObjectMembers(raw, func(key, val []byte) bool {
		switch string(key) {
		case "invocation_id":
			return first(0) && wire.StringField(val, &p.InvocationID)
		case "event":
			return first(1) && !wire.IsNull(val) && fastHostEvent(val, &p.Event)
		}
		return false
	})
}

func fastHostEvent(raw []byte, e *HostEvent) bool {
	var seen uint8
	first := func(bit uint8) bool {
		if seen&(1<<bit) != 0 {
			return false
		}
		seen |= 1 << bit
		return true
	}
	return wire.ObjectMembers(raw, func(key, val []byte) bool {
		switch string(key) {
		case "kind":
			return first(0) && wire.StringField(val, &e.Kind)
		case "message":
			return first(1) && wire.StringField(val, &e.Message)
		case "timestamp_millis":
			if !first(2) || wire.IsNull(val) {
				return false
			}
			n, ok := wire.DecodeUint64(val)
			if !ok || n > 1<<62 {
				return false
			}
			e.TimestampMillis = int64(n)
			return true
		case "metadata":
			return first(3) && wire.ObjectField(val, &e.Metadata)
		}
		return false
	})
}
