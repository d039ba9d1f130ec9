// Package jsonout is the one way the host writes JSON for people and
// programs to read: the REST API's answers, the CLI's --json and
// --format json output. It leaves <, > and & as they are (encoding/json
// escapes them as \u003c, \u003e and \u0026 by default, for JSON pasted
// into HTML, which none of these outputs is).
package jsonout

import (
	"bytes"
	"encoding/json"
	"io"
)

// NewEncoder writes values indented by two spaces, without HTML escaping.
func NewEncoder(w io.Writer) *json.Encoder {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc
}

// Marshal is json.Marshal without HTML escaping: compact, no newline.
func Marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}
