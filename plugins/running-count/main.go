// Command running-count is a sluice map plugin keeping operator state: it
// sets the field "count" of each record to the number of records its
// subtask has seen, that one included. The count is operator state (not
// keyed state): checkpointed through sdk.Operator.State as 8 little-endian
// bytes, and after a restore the numbering goes on where it stopped. After
// a rescale a subtask adds up the counts it is given.
package main

import (
	"encoding/binary"
	"fmt"

	sdk "github.com/sluicehq/sluice/sdk/go"
)

// counter is the subtask's running count.
type counter struct{ n int64 }

func (c *counter) Snapshot() ([]byte, error) {
	return binary.LittleEndian.AppendUint64(nil, uint64(c.n)), nil
}

func (c *counter) Restore(b []byte) error {
	if len(b) != 8 {
		return fmt.Errorf("a count snapshot has 8 bytes, this one %d", len(b))
	}
	c.n += int64(binary.LittleEndian.Uint64(b))
	return nil
}

var count counter

func init() {
	sdk.Map(func(r sdk.Record) (sdk.Record, error) {
		count.n++
		return r.SetInt("count", count.n), nil
	}).State(&count)
}

func main() {}
