package otlp

import (
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"math"
	"strconv"
	"strings"
)

// enc writes one OTLP message's fields in protobuf or in OTLP/JSON, so
// that one description of each message serves both. It is written by
// hand, not with OTLP's generated types: those, and the protobuf runtime
// under them, register their descriptors at package initialization in
// every process that links them, exporting or not (bench/cli). Field
// numbers and JSON names are opentelemetry-proto's (v1); the tests compare
// what is sent with what the upstream exporters send.
//
// As proto3 does, a field holding its zero value is left out, except the
// members of a oneof and the optional fields (the *Always methods), and
// a message field is written whenever the caller writes it.
type enc struct {
	json bool
	b    []byte
	n    int // JSON: fields written so far in this object
}

// wireType is a protobuf wire type.
type wireType uint64

const (
	wireVarint  wireType = 0
	wireFixed64 wireType = 1
	wireBytes   wireType = 2
	wireFixed32 wireType = 5
)

// key starts field num (JSON: name) of wire type t.
func (e *enc) key(num int, t wireType, name string) {
	if e.json {
		if e.n > 0 {
			e.b = append(e.b, ',')
		}
		e.b = appendJSONString(e.b, name)
		e.b = append(e.b, ':')
	} else {
		e.b = binary.AppendUvarint(e.b, uint64(num)<<3|uint64(t))
	}
	e.n++
}

// sub encodes a message with fn: its bytes in protobuf, its object in JSON.
func (e *enc) sub(fn func(*enc)) []byte {
	s := &enc{json: e.json}
	if s.json {
		s.b = append(s.b, '{')
	}
	fn(s)
	if s.json {
		s.b = append(s.b, '}')
	}
	return s.b
}

// message writes the message fn encodes as field num.
func (e *enc) message(num int, name string, fn func(*enc)) {
	e.raw(num, name, e.sub(fn))
}

// raw writes body, a message sub encoded, as field num.
func (e *enc) raw(num int, name string, body []byte) {
	e.key(num, wireBytes, name)
	if !e.json {
		e.b = binary.AppendUvarint(e.b, uint64(len(body)))
	}
	e.b = append(e.b, body...)
}

// messages writes n messages as the repeated field num; each(i) encodes
// the i-th. None: the field is left out.
func (e *enc) messages(num int, name string, n int, each func(int, *enc)) {
	bodies := make([][]byte, n)
	for i := range n {
		bodies[i] = e.sub(func(s *enc) { each(i, s) })
	}
	e.raws(num, name, bodies)
}

// raws writes bodies, messages sub encoded, as the repeated field num.
func (e *enc) raws(num int, name string, bodies [][]byte) {
	if len(bodies) == 0 {
		return
	}
	if !e.json {
		for _, body := range bodies {
			e.raw(num, name, body)
		}
		return
	}
	e.key(num, wireBytes, name)
	e.b = append(e.b, '[')
	for i, body := range bodies {
		if i > 0 {
			e.b = append(e.b, ',')
		}
		e.b = append(e.b, body...)
	}
	e.b = append(e.b, ']')
}

func (e *enc) string(num int, name, v string) {
	if v != "" {
		e.stringAlways(num, name, v)
	}
}

func (e *enc) stringAlways(num int, name, v string) {
	e.key(num, wireBytes, name)
	if e.json {
		e.b = appendJSONString(e.b, v)
		return
	}
	e.b = binary.AppendUvarint(e.b, uint64(len(v)))
	e.b = append(e.b, v...)
}

// bytesAlways writes v (base64 in JSON).
func (e *enc) bytesAlways(num int, name string, v []byte) {
	e.key(num, wireBytes, name)
	if e.json {
		q, _ := json.Marshal(v) // a []byte marshals as its base64 string
		e.b = append(e.b, q...)
		return
	}
	e.b = binary.AppendUvarint(e.b, uint64(len(v)))
	e.b = append(e.b, v...)
}

// id writes a trace or span id (upper-case hex in JSON).
func (e *enc) id(num int, name string, v []byte) {
	if len(v) == 0 {
		return
	}
	if !e.json {
		e.bytesAlways(num, name, v)
		return
	}
	e.key(num, wireBytes, name)
	e.b = appendJSONString(e.b, strings.ToUpper(hex.EncodeToString(v)))
}

// scalar writes field num of wire type t: bits in protobuf (a varint, or
// little-endian fixed), text in JSON.
func (e *enc) scalar(num int, t wireType, name string, bits uint64, text string) {
	e.key(num, t, name)
	switch {
	case e.json:
		e.b = append(e.b, text...)
	case t == wireFixed64:
		e.b = binary.LittleEndian.AppendUint64(e.b, bits)
	case t == wireFixed32:
		e.b = binary.LittleEndian.AppendUint32(e.b, uint32(bits))
	default:
		e.b = binary.AppendUvarint(e.b, bits)
	}
}

// quoted is a 64-bit integer's JSON: a string.
func quoted(s string) string { return `"` + s + `"` }

func (e *enc) boolAlways(num int, name string, v bool) {
	var u uint64
	if v {
		u = 1
	}
	e.scalar(num, wireVarint, name, u, strconv.FormatBool(v))
}

func (e *enc) bool(num int, name string, v bool) {
	if v {
		e.boolAlways(num, name, v)
	}
}

// uint32 writes a uint32 or an enum (numbers in JSON).
func (e *enc) uint32(num int, name string, v uint32) {
	if v != 0 {
		e.scalar(num, wireVarint, name, uint64(v), strconv.FormatUint(uint64(v), 10))
	}
}

func (e *enc) int64Always(num int, name string, v int64) {
	e.scalar(num, wireVarint, name, uint64(v), quoted(strconv.FormatInt(v, 10)))
}

// sint32 writes a zigzag-encoded int32.
func (e *enc) sint32(num int, name string, v int32) {
	if v != 0 {
		e.scalar(num, wireVarint, name, uint64(uint32(v<<1)^uint32(v>>31)), strconv.FormatInt(int64(v), 10))
	}
}

func (e *enc) fixed32(num int, name string, v uint32) {
	if v != 0 {
		e.scalar(num, wireFixed32, name, uint64(v), strconv.FormatUint(uint64(v), 10))
	}
}

func (e *enc) fixed64(num int, name string, v uint64) {
	if v != 0 {
		e.scalar(num, wireFixed64, name, v, quoted(strconv.FormatUint(v, 10)))
	}
}

func (e *enc) sfixed64Always(num int, name string, v int64) {
	e.scalar(num, wireFixed64, name, uint64(v), quoted(strconv.FormatInt(v, 10)))
}

func (e *enc) double(num int, name string, v float64) {
	if v != 0 || math.Signbit(v) {
		e.doubleAlways(num, name, v)
	}
}

func (e *enc) doubleAlways(num int, name string, v float64) {
	e.scalar(num, wireFixed64, name, math.Float64bits(v), string(appendJSONDouble(nil, v)))
}

// packed writes a packed repeated scalar field of n elements: each(i)
// appends the i-th to b (its protobuf encoding) or its JSON.
func (e *enc) packed(num int, name string, n int, each func(b []byte, i int) []byte) {
	if n == 0 {
		return
	}
	e.key(num, wireBytes, name)
	if e.json {
		e.b = append(e.b, '[')
		for i := range n {
			if i > 0 {
				e.b = append(e.b, ',')
			}
			e.b = each(e.b, i)
		}
		e.b = append(e.b, ']')
		return
	}
	var body []byte
	for i := range n {
		body = each(body, i)
	}
	e.b = binary.AppendUvarint(e.b, uint64(len(body)))
	e.b = append(e.b, body...)
}

// packedFixed64 writes repeated fixed64 (strings in JSON).
func (e *enc) packedFixed64(num int, name string, vs []uint64) {
	e.packed(num, name, len(vs), func(b []byte, i int) []byte {
		if e.json {
			return append(strconv.AppendUint(append(b, '"'), vs[i], 10), '"')
		}
		return binary.LittleEndian.AppendUint64(b, vs[i])
	})
}

// packedUint64 writes repeated uint64 (strings in JSON).
func (e *enc) packedUint64(num int, name string, vs []uint64) {
	e.packed(num, name, len(vs), func(b []byte, i int) []byte {
		if e.json {
			return append(strconv.AppendUint(append(b, '"'), vs[i], 10), '"')
		}
		return binary.AppendUvarint(b, vs[i])
	})
}

func (e *enc) packedDouble(num int, name string, vs []float64) {
	e.packed(num, name, len(vs), func(b []byte, i int) []byte {
		if e.json {
			return appendJSONDouble(b, vs[i])
		}
		return binary.LittleEndian.AppendUint64(b, math.Float64bits(vs[i]))
	})
}

func appendJSONDouble(b []byte, f float64) []byte {
	switch {
	case math.IsNaN(f):
		return append(b, `"NaN"`...)
	case math.IsInf(f, 1):
		return append(b, `"Infinity"`...)
	case math.IsInf(f, -1):
		return append(b, `"-Infinity"`...)
	}
	return strconv.AppendFloat(b, f, 'g', -1, 64)
}

func appendJSONString(b []byte, s string) []byte {
	q, _ := json.Marshal(s) // a string always marshals
	return append(b, q...)
}

// exportRequest is an ExportTraceServiceRequest or
// ExportMetricsServiceRequest holding n items (field 1, repeated, named
// field in JSON): each(i) encodes the i-th.
func exportRequest(json bool, field string, n int, each func(int, *enc)) []byte {
	e := &enc{json: json}
	return e.sub(func(e *enc) { e.messages(1, field, n, each) })
}
