package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math"
	"strconv"
	"strings"
)

// errStopped ends a JSON parse after its error has been recorded.
var errStopped = errors.New("stopped")

// parseJSON reads one JSON value into a value, rejecting duplicate keys
// (which encoding/json would accept silently). It returns nil after a
// fatal error; after duplicate keys or out-of-range numbers it returns
// what it could read, so that the rest can still be checked.
func parseJSON(data []byte, rep *report) *value {
	data = bytes.TrimPrefix(data, []byte(utf8BOM))
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	p := jsonParser{dec: dec, data: data, rep: rep}
	root, err := p.value("", 0)
	if err == nil {
		err = p.end()
	}
	switch {
	case errors.Is(err, io.EOF):
		rep.failf(CodeInvalidType, "", 0, "the config is empty; expected a mapping")
		return nil
	case err != nil:
		p.syntax(err)
		return nil
	}
	return root
}

const utf8BOM = "\xEF\xBB\xBF"

// jsonParser walks the tokens of a json.Decoder.
type jsonParser struct {
	dec  *json.Decoder
	data []byte
	rep  *report
	// Offsets only grow while parsing, so lines are counted incrementally
	// from the last offset asked about.
	lastOff  int
	lastLine int
}

// line is the 1-based line of byte offset off.
func (p *jsonParser) line(off int64) int {
	o := int(min(max(off, 0), int64(len(p.data))))
	if o < p.lastOff || p.lastLine == 0 {
		p.lastOff, p.lastLine = 0, 1
	}
	p.lastLine += bytes.Count(p.data[p.lastOff:o], []byte{'\n'})
	p.lastOff = o
	return p.lastLine
}

// syntax records a parse error with the line it happened on.
func (p *jsonParser) syntax(err error) {
	if errors.Is(err, errStopped) {
		return
	}
	var se *json.SyntaxError
	switch {
	case errors.As(err, &se):
		p.rep.failf(CodeSyntax, "", p.line(se.Offset), "invalid JSON: %v", se)
	case errors.Is(err, io.ErrUnexpectedEOF):
		p.rep.failf(CodeSyntax, "", p.line(int64(len(p.data))), "invalid JSON: unexpected end of input")
	default:
		p.rep.failf(CodeSyntax, "", p.line(p.dec.InputOffset()), "invalid JSON: %v", err)
	}
}

// end checks that nothing follows the top-level value.
func (p *jsonParser) end() error {
	_, err := p.dec.Token()
	switch {
	case errors.Is(err, io.EOF):
		return nil
	case err != nil:
		return err
	}
	p.rep.failf(CodeSyntax, "", p.line(p.dec.InputOffset()), "invalid JSON: unexpected data after the top-level value")
	return errStopped
}

func (p *jsonParser) value(path string, depth int) (*value, error) {
	tok, err := p.dec.Token()
	if err != nil {
		if depth > 0 && errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	line := p.line(p.dec.InputOffset())
	switch t := tok.(type) {
	case json.Delim:
		if depth >= maxDepth {
			p.rep.failf(CodeTooLarge, "", line, "nested deeper than %d levels", maxDepth)
			return nil, errStopped
		}
		if t == '{' {
			return p.object(path, line, depth)
		}
		return p.array(path, line, depth)
	case string:
		return &value{kind: kindString, line: line, text: t}, nil
	case json.Number:
		return p.number(t, path, line), nil
	case bool:
		return &value{kind: kindBool, line: line, boolean: t}, nil
	}
	return &value{kind: kindNull, line: line}, nil
}

func (p *jsonParser) number(n json.Number, path string, line int) *value {
	v := &value{kind: kindNumber, line: line, text: string(n), integer: !strings.ContainsAny(string(n), ".eE")}
	if f, err := strconv.ParseFloat(string(n), 64); err != nil || math.IsInf(f, 0) {
		p.rep.failf(CodeInvalidValue, path, line, "number %s is out of range", n)
	}
	return v
}

func (p *jsonParser) object(path string, line, depth int) (*value, error) {
	v := &value{kind: kindObject, line: line}
	firstLine := map[string]int{}
	for p.dec.More() {
		tok, err := p.dec.Token()
		if err != nil {
			return nil, err
		}
		key, _ := tok.(string) // the decoder only returns string keys
		keyLine := p.line(p.dec.InputOffset())
		child := childPath(path, key)
		val, err := p.value(child, depth+1)
		if err != nil {
			return nil, err
		}
		if first, dup := firstLine[key]; dup {
			e := p.rep.failf(CodeDuplicateKey, child, keyLine, "duplicate key %q (first on line %d)", key, first)
			e.Metadata["first_line"] = first
			continue
		}
		firstLine[key] = keyLine
		v.members = append(v.members, member{key: key, keyLine: keyLine, value: val})
	}
	_, err := p.dec.Token() // '}'
	return v, err
}

func (p *jsonParser) array(path string, line, depth int) (*value, error) {
	v := &value{kind: kindArray, line: line}
	for p.dec.More() {
		it, err := p.value(indexPath(path, len(v.items)), depth+1)
		if err != nil {
			return nil, err
		}
		v.items = append(v.items, it)
	}
	_, err := p.dec.Token() // ']'
	return v, err
}
