package connector

import (
	"strconv"
	"strings"
	"testing"
)

func TestElementsInOrder(t *testing.T) {
	values := []any{
		map[string]any{"word": "b", "n": 2},
		"plain",
		int(7),
		2.5,
		true,
		nil,
		[]any{1, "x", map[string]any{"deep": []any{}}},
		map[string]any{"z": 1, "a": map[string]any{"y": nil, "b": false}},
		uint64(18446744073709551615), // past int64: a uint64, as the file source reads it from JSON
		uint64(9223372036854775807),
	}
	c, src := runSource(t, &Builtin{}, sourceSpec("el", "elements", map[string]any{"values": values}), 0, 1)
	want := []string{
		`{"n":2,"word":"b"}`, // map[string]any has no order: keys sorted
		`"plain"`, `7`, `2.5`, `true`, `null`,
		`[1,"x",{"deep":[]}]`,
		`{"a":{"b":false,"y":null},"z":1}`,
		`18446744073709551615`, `9223372036854775807`,
	}
	if got := strings.Join(c.jsons(), "\n"); got != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", got, strings.Join(want, "\n"))
	}
	if src.Total() != int64(len(values)) {
		t.Errorf("Total = %d", src.Total())
	}
	for _, r := range c.records {
		if r.hasTime || r.key != nil {
			t.Errorf("record %s has time or key", r.json)
		}
	}
	if v := c.records[8].value; len(v) != 9 || v[0] != 0xcf {
		t.Errorf("uint64 past int64 encoded as % x, want 0xcf and 8 bytes", v)
	}
}

func TestElementsManyBatches(t *testing.T) {
	values := make([]any, 1300)
	for i := range values {
		values[i] = map[string]any{"i": i}
	}
	c, _ := runSource(t, &Builtin{}, sourceSpec("el", "elements", map[string]any{"values": values}), 0, 1)
	if len(c.records) != 1300 || c.batches != 3 {
		t.Fatalf("%d records in %d batches", len(c.records), c.batches)
	}
	for i, r := range c.records {
		if want := `{"i":` + strconv.Itoa(i) + `}`; r.json != want {
			t.Fatalf("record %d is %s", i, r.json)
		}
	}
}

func TestElementsErrors(t *testing.T) {
	b := &Builtin{}
	_, err := b.Source(sourceSpec("el", "elements", map[string]any{"values": []any{1}}), 0, 2)
	wantErrContaining(t, err, `source "el" (elements)`, "parallelism must be 1", "fromElements")
	_, err = b.Source(sourceSpec("el", "elements", map[string]any{}), 0, 1)
	wantErrContaining(t, err, `option "values" is required`)
	_, err = b.Source(sourceSpec("el", "elements", map[string]any{"values": "x"}), 0, 1)
	wantErrContaining(t, err, `option "values" must be a list`)
	_, err = b.Source(sourceSpec("el", "elements", map[string]any{"values": []any{1, struct{}{}}}), 0, 1)
	wantErrContaining(t, err, "values[1]", "cannot turn a struct {}")
}
