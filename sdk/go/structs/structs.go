// Package structs decodes sluice records into Go structs with
// github.com/vmihailenco/msgpack/v5, for operators where convenience wins
// over speed:
//
//	var t struct {
//		Account string `msgpack:"account"`
//		Amount  int64  `msgpack:"amount"`
//	}
//	if err := structs.Decode(r, &t); err != nil { ... }
//
// It reflects and allocates on every record (BenchmarkDecode: about 4
// times the time of the typed getters and 5 allocations per record for a
// four-field struct, natively) and adds about 0.8 MB to a module, which is
// why it is not part of package sdk: plugins that do not import it do not
// carry the library.
package structs

import (
	sdk "github.com/sluicehq/sluice/sdk/go"
	"github.com/vmihailenco/msgpack/v5"
)

// Decode decodes the fields of r (its edits applied) into v, a pointer to
// a struct or map. Struct fields match record fields by their msgpack tag,
// else by name.
func Decode(r sdk.Record, v any) error {
	b, err := r.AppendMsgpack(nil)
	if err != nil {
		return err
	}
	return msgpack.Unmarshal(b, v)
}
