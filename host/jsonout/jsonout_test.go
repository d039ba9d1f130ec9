package jsonout

import (
	"bytes"
	"encoding/json"
	"testing"
)

func TestNoHTMLEscaping(t *testing.T) {
	v := map[string]any{"msg": `a > b && c < d`, "raw": json.RawMessage(`"x > y"`)}
	got, err := Marshal(v)
	if want := `{"msg":"a > b && c < d","raw":"x > y"}`; err != nil || string(got) != want {
		t.Errorf("Marshal: %s, %v; want %s", got, err, want)
	}
	var b bytes.Buffer
	if err := NewEncoder(&b).Encode(v); err != nil {
		t.Fatal(err)
	}
	if want := "{\n  \"msg\": \"a > b && c < d\",\n  \"raw\": \"x > y\"\n}\n"; b.String() != want {
		t.Errorf("NewEncoder wrote\n%s\nwant\n%s", b.String(), want)
	}
	// control characters are still escaped
	if got, _ := Marshal("\x1b[2J"); string(got) != `"\u001b[2J"` {
		t.Errorf("an escape sequence became %s", got)
	}
}
