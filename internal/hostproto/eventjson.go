package hostproto

import (
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
	return appendJSONNoEscape(dst, p)
}

func appendEventParams(dst []byte, p *EventParams) ([]byte, bool) {
	dst = append(dst, `{"invocation_id":`...)
	dst = wire.AppendString(dst, p.InvocationID, false)
	dst = append(dst, `,"event":`...)
	dst, ok := appendHostEvent(dst, &p.Event)
	if !ok {
		return dst, false
	}
	return append(dst, '}'), true
}

// AppendJSON encodes p without reflection, as EventParams.AppendJSON.
func (p *EventsParams) AppendJSON(dst []byte) ([]byte, error) {
	if b, ok := appendEventsParams(dst, p); ok {
		return b, nil
	}
	return appendJSONNoEscape(dst, p)
}

func appendEventsParams(dst []byte, p *EventsParams) ([]byte, bool) {
	dst = append(dst, `{"invocation_id":`...)
	dst = wire.AppendString(dst, p.InvocationID, false)
	if p.Events == nil {
		return append(dst, `,"events":null}`...), true
	}
	dst = append(dst, `,"events":[`...)
	for i := range p.Events {
		if i > 0 {
			dst = append(dst, ',')
		}
		var ok bool
		if dst, ok = appendHostEvent(dst, &p.Events[i]); !ok {
			return dst, false
		}
	}
	return append(dst, "]}"...), true
}

func appendHostEvent(dst []byte, e *HostEvent) ([]byte, bool) {
	dst = append(dst, `{"kind":`...)
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
	return append(dst, '}'), true
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

// DecodeEventsParams is DecodeEventParams for a batch.
func DecodeEventsParams(raw []byte, p *EventsParams) error {
	var fast EventsParams
	if fastEventsParams(raw, &fast) {
		*p = fast
		return nil
	}
	return json.Unmarshal(raw, p)
}

func fastEventsParams(raw []byte, p *EventsParams) bool {
	var s seen
	return wire.ObjectMembers(raw, func(key, val []byte) bool {
		switch string(key) {
		case "invocation_id":
			return s.first(0) && wire.StringField(val, &p.InvocationID)
		case "events":
			if !s.first(1) || wire.IsNull(val) {
				return false
			}
			p.Events = []HostEvent{}
			return wire.ArrayElements(val, func(elem []byte) bool {
				var e HostEvent
				if wire.IsNull(elem) || !fastHostEvent(elem, &e) {
					return false
				}
				p.Events = append(p.Events, e)
				return true
			})
		}
		return false
	})
}

// fastEventParams accepts only what encoding/json would decode to the same
// value; anything else (repeated keys, numbers of another form, unknown
// shapes) reports false and goes to the fallback.
func fastEventParams(raw []byte, p *EventParams) bool {
	var s seen
	return wire.ObjectMembers(raw, func(key, val []byte) bool {
		switch string(key) {
		case "invocation_id":
			return s.first(0) && wire.StringField(val, &p.InvocationID)
		case "event":
			return s.first(1) && !wire.IsNull(val) && fastHostEvent(val, &p.Event)
		}
		return false
	})
}

func fastHostEvent(raw []byte, e *HostEvent) bool {
	var s seen
	return wire.ObjectMembers(raw, func(key, val []byte) bool {
		switch string(key) {
		case "kind":
			return s.first(0) && wire.StringField(val, &e.Kind)
		case "message":
			return s.first(1) && wire.StringField(val, &e.Message)
		case "timestamp_millis":
			if !s.first(2) || wire.IsNull(val) {
				return false
			}
			n, ok := wire.DecodeUint64(val)
			if !ok || n > 1<<62 {
				return false
			}
			e.TimestampMillis = int64(n)
			return true
		case "metadata":
			return s.first(3) && wire.ObjectField(val, &e.Metadata)
		}
		return false
	})
}

// DecodeEventNotification decodes an "event" or "events" notification's
// params into the invocation id and its events, in order. ok is false for
// any other method.
func DecodeEventNotification(method string, raw []byte) (invocationID string, events []HostEvent, ok bool, err error) {
	switch method {
	case NotifyEvent:
		var p EventParams
		if err := DecodeEventParams(raw, &p); err != nil {
			return "", nil, true, err
		}
		return p.InvocationID, []HostEvent{p.Event}, true, nil
	case NotifyEvents:
		var p EventsParams
		if err := DecodeEventsParams(raw, &p); err != nil {
			return "", nil, true, err
		}
		return p.InvocationID, p.Events, true, nil
	}
	return "", nil, false, nil
}
