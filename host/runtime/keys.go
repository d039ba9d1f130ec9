package runtime

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/sluicehq/sluice/abi"
)

// keyReader extracts the key of each record leaving on a HASH or CUSTOM
// edge without decoding the value: one top-level field read in place
// (abi.MapField), several fields as a msgpack array (a Flink tuple,
// hashed as one), or the keys a key-selector plugin returns for a whole
// batch.
type keyReader struct {
	fields  []string
	plugin  string
	sel     KeySelector
	scratch []byte // composite key being built
	keys    []byte // the selector's keys for the current batch
	off     int
}

// load prepares the keys of a batch (a key selector runs once per batch).
func (k *keyReader) load(b []byte, count int) error {
	if k.sel == nil {
		return nil
	}
	keys, err := k.sel.Keys(b, count, k.keys[:0])
	if err != nil {
		return fmt.Errorf("key-selector plugin %q: %w", k.plugin, err)
	}
	k.keys, k.off = keys, 0
	return nil
}

// next returns the key of the record whose value is value (a view valid
// until the next call).
func (k *keyReader) next(value []byte) ([]byte, error) {
	if k.sel != nil {
		end, err := abi.Skip(k.keys, k.off)
		if err != nil {
			return nil, fmt.Errorf("key-selector plugin %q returned fewer keys than records: %w", k.plugin, err)
		}
		key := k.keys[k.off:end]
		k.off = end
		if abi.IsNil(key) {
			return nil, fmt.Errorf("key-selector plugin %q returned null: %w", k.plugin, abi.ErrNilKey)
		}
		return key, nil
	}
	if len(k.fields) == 1 {
		return k.field(value, k.fields[0])
	}
	k.scratch = abi.AppendArrayHeader(k.scratch[:0], len(k.fields))
	for _, f := range k.fields {
		raw, err := k.field(value, f)
		if err != nil {
			return nil, err
		}
		k.scratch = append(k.scratch, raw...)
	}
	return k.scratch, nil
}

func (k *keyReader) field(v []byte, name string) ([]byte, error) {
	raw, ok, err := abi.MapField(v, name)
	switch {
	case err != nil && len(v) > 0 && abi.TypeOf(v) != abi.TypeMap:
		return nil, fmt.Errorf("no key field %q: the record is %s, not a map", name, abi.TypeOf(v).Phrase())
	case err != nil:
		return nil, fmt.Errorf("reading key field %q: %w", name, err)
	case !ok:
		return nil, fmt.Errorf("no key field %q", name)
	case abi.IsNil(raw):
		return nil, fmt.Errorf("key field %q is null: %w", name, abi.ErrNilKey)
	}
	return raw, nil
}

// describe names the key for messages: "accountId", ["a","b"] or
// plugin "name".
func (k *keyReader) describe() string {
	if k.plugin != "" {
		return "plugin " + strconv.Quote(k.plugin)
	}
	if len(k.fields) == 1 {
		return strconv.Quote(k.fields[0])
	}
	q := make([]string, len(k.fields))
	for i, f := range k.fields {
		q[i] = strconv.Quote(f)
	}
	return "[" + strings.Join(q, ",") + "]"
}

func (k *keyReader) close() error {
	if k == nil || k.sel == nil {
		return nil
	}
	err := k.sel.Close()
	k.sel = nil
	return err
}

// hashable reports whether abi.KeyHash accepts key, a whole msgpack
// value, without computing it: a string, a boolean, a float or an integer
// other than a uint64 (which may be out of range). An edge into one
// subtask needs no hash, only a valid key.
func hashable(key []byte) bool {
	switch abi.TypeOf(key) {
	case abi.TypeStr, abi.TypeBool, abi.TypeFloat:
		return true
	case abi.TypeInt:
		return key[0] != 0xcf
	}
	return false
}
