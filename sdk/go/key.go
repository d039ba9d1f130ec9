package sdk

import "github.com/sluicehq/sluice/abi"

// Key is a record key: a msgpack value (a string, an int, or an array of
// them for a composite key). It has Value's getters and Hash.
type Key struct{ Value }

// Hash is the key's Java hashCode (abi.KeyHash), the hash Flink
// partitions by. A nil or missing key is an error.
func (k Key) Hash() (int32, error) { return abi.KeyHash(k.raw) }

// StrKey returns a string key. It allocates; to key by a field without
// copying use r.Get("field").Key().
func StrKey(s string) Key { return Key{Value{abi.AppendStr(nil, s)}} }

// IntKey returns an integer key. It allocates.
func IntKey(v int64) Key { return Key{Value{abi.AppendInt(nil, v)}} }
