package catalog

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

func asTypeErr(err error, target **json.UnmarshalTypeError) bool { return errors.As(err, target) }

// checkDuplicateKeys walks a JSON document and fails on the first object
// that repeats a key; encoding/json would silently keep the last one.
func checkDuplicateKeys(data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	_, err := walkValue(dec, "")
	if err == io.EOF {
		return nil
	}
	return err
}

func walkValue(dec *json.Decoder, path string) (json.Token, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch tok {
	case json.Delim('{'):
		seen := map[string]bool{}
		for dec.More() {
			kt, err := dec.Token()
			if err != nil {
				return nil, err
			}
			k, _ := kt.(string)
			child := k
			if path != "" {
				child = path + "." + k
			}
			if seen[k] {
				return nil, fmt.Errorf("%s: duplicate key", child)
			}
			seen[k] = true
			if _, err := walkValue(dec, child); err != nil {
				return nil, err
			}
		}
		_, err = dec.Token()
		return tok, err
	case json.Delim('['):
		for i := 0; dec.More(); i++ {
			if _, err := walkValue(dec, fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return nil, err
			}
		}
		_, err = dec.Token()
		return tok, err
	}
	return tok, nil
}
