package fuel_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/tetratelabs/wazero"

	"github.com/sluicehq/sluice/host/plugin/fuel"
)

// TestMaxTableEntries: with MaxTableEntries, a table without a maximum
// (as Go's modules declare theirs) or with a larger one grows to the cap
// and no further (table.grow returns -1), one with a smaller maximum keeps
// it, and a table whose minimum is above the cap is refused.
func TestMaxTableEntries(t *testing.T) {
	src := `(module
	  (table $open 1 funcref) (table $big 1 1000000 funcref) (table $small 1 5 funcref)
	  (func (export "grow_open") (param i32) (result i32) (table.grow $open (ref.null func) (local.get 0)))
	  (func (export "grow_big") (param i32) (result i32) (table.grow $big (ref.null func) (local.get 0)))
	  (func (export "grow_small") (param i32) (result i32) (table.grow $small (ref.null func) (local.get 0))))`
	opts := fuel.Options{MaxTableEntries: 100}
	m := loadMetered(t, newRuntime(t, wazero.NewRuntimeConfig()), "tables", watText(t, src), opts)
	for _, c := range []struct {
		fn         string
		grow, want uint64
	}{
		{"grow_open", 99, 1}, {"grow_open", 1, uint64(0xffffffff)}, // at 100: no more
		{"grow_big", 100, uint64(0xffffffff)}, {"grow_big", 50, 1},
		{"grow_small", 4, 1}, {"grow_small", 1, uint64(0xffffffff)},
	} {
		res, _ := m.mustCall(c.fn, 1<<20, c.grow)
		if uint32(res[0]) != uint32(c.want) {
			t.Errorf("%s(%d) = %d, want %d", c.fn, c.grow, int32(res[0]), int32(c.want))
		}
	}
	_, err := fuel.Instrument(watText(t, `(module (table 1 funcref) (table 1 funcref) (table 1 funcref) (table 1 funcref) (table 1 funcref))`), opts)
	if !errors.Is(err, fuel.ErrLimit) || !strings.Contains(err.Error(), "declares 5 tables, more than the limit of 4") {
		t.Errorf("five tables: %v", err)
	}
	_, err = fuel.Instrument(watText(t, `(module (table 101 funcref))`), opts)
	if !errors.Is(err, fuel.ErrLimit) || !strings.Contains(err.Error(), "table 0 has 101 entries, more than the limit of 100") {
		t.Errorf("a table above the cap: %v", err)
	}
}
