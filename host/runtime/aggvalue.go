package runtime

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/sluicehq/sluice/abi"
)

// The cell of a built-in aggregation holds a header then the msgpack map the
// operator emits for the key:
//
//	[0:4]  offset of the aggregated field's value within the map (uint32 LE)
//	[4:]   the map
//
// A number the operator computes (sum, min, max, count) is encoded fixed
// width (int64 0xd3 or float64 0xcb, 9 bytes) so it is updated in place:
// the map never moves for a numeric aggregate. It is the same number to
// every reader (JSON shows 5, not the width). The aggregate a record emits
// carries that record's event time, so the cell keeps none.
const cellHeader = 4

func cellOff(c []byte) int      { return int(binary.LittleEndian.Uint32(c)) }
func cellValue(c []byte) []byte { return c[cellHeader:] }
func cellField(c []byte) []byte { return c[cellHeader+cellOff(c):] }

func putHeader(dst []byte, off int) []byte {
	return binary.LittleEndian.AppendUint32(dst, uint32(off))
}

// num is a msgpack number: an int stays an int, a float a float.
type num struct {
	isFloat bool
	i       int64
	f       float64
}

func (n num) float() float64 {
	if n.isFloat {
		return n.f
	}
	return float64(n.i)
}

// readNum reads an int or a float.
func readNum(raw []byte) (num, error) {
	switch abi.TypeOf(raw) {
	case abi.TypeInt:
		i, err := abi.ReadInt(raw)
		if errors.Is(err, abi.ErrRange) {
			return num{}, fmt.Errorf("is %d, above 9223372036854775807: integers add as Java longs (write it as a float to add it as a double)", binary.BigEndian.Uint64(raw[1:]))
		}
		return num{i: i}, err
	case abi.TypeFloat:
		f, err := abi.ReadFloat(raw)
		return num{isFloat: true, f: f}, err
	}
	return num{}, fmt.Errorf("is %s, want a number", abi.TypeOf(raw))
}

// readFixed reads a number encoded by putFixed.
func readFixed(b []byte) num {
	u := binary.BigEndian.Uint64(b[1:9])
	if b[0] == 0xcb {
		return num{isFloat: true, f: math.Float64frombits(u)}
	}
	return num{i: int64(u)}
}

// putFixed writes n in 9 bytes at b.
func putFixed(b []byte, n num) {
	if n.isFloat {
		b[0] = 0xcb
		binary.BigEndian.PutUint64(b[1:], math.Float64bits(n.f))
		return
	}
	b[0] = 0xd3
	binary.BigEndian.PutUint64(b[1:], uint64(n.i))
}

func appendFixed(dst []byte, n num) []byte {
	dst = append(dst, make([]byte, 9)...)
	putFixed(dst[len(dst)-9:], n)
	return dst
}

// add sums two numbers: int + int wraps around as Java's long does; any
// float makes the sum a float.
func add(a, b num) num {
	if !a.isFloat && !b.isFloat {
		return num{i: a.i + b.i}
	}
	return num{isFloat: true, f: a.float() + b.float()}
}

// compareValues orders two msgpack values of a min/max field as Java's
// compareTo orders the Flink field's values (ComparableAggregator): ints
// exactly; with a float, as Double.compare does (-0.0 before 0.0, NaN after
// every number, NaN equal to NaN); strings by UTF-16 code unit
// (abi.CompareJavaStrings: not quite code point order); booleans false
// before true (Boolean.compareTo). Other types and mixed ones are errors.
func compareValues(a, b []byte) (int, error) {
	ta, tb := abi.TypeOf(a), abi.TypeOf(b)
	numeric := func(t abi.Type) bool { return t == abi.TypeInt || t == abi.TypeFloat }
	switch {
	case numeric(ta) && numeric(tb):
		x, err := readNum(a)
		if err != nil {
			return 0, err
		}
		y, err := readNum(b)
		if err != nil {
			return 0, err
		}
		if !x.isFloat && !y.isFloat {
			return cmp.Compare(x.i, y.i), nil
		}
		return compareDouble(x.float(), y.float()), nil
	case ta == abi.TypeStr && tb == abi.TypeStr:
		x, err := abi.ReadStr(a)
		if err != nil {
			return 0, err
		}
		y, err := abi.ReadStr(b)
		if err != nil {
			return 0, err
		}
		return abi.CompareJavaStrings(x, y), nil
	case ta == abi.TypeBool && tb == abi.TypeBool: // Boolean.compareTo: false < true
		x, err := abi.ReadBool(a)
		if err != nil {
			return 0, err
		}
		y, err := abi.ReadBool(b)
		if err != nil {
			return 0, err
		}
		return cmp.Compare(b2i(x), b2i(y)), nil
	}
	return 0, fmt.Errorf("cannot compare %s with %s", tb, ta)
}

// compareDouble is Java's Double.compare: the numeric order, except that
// -0.0 comes before 0.0 and NaN after everything (and equals NaN).
func compareDouble(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	switch an, bn := a != a, b != b; {
	case an && bn:
		return 0
	case an:
		return 1
	case bn:
		return -1
	}
	switch sa, sb := math.Signbit(a), math.Signbit(b); {
	case sa == sb:
		return 0
	case sa:
		return -1
	}
	return 1
}

// fieldOffset is the offset of sub (a sub-slice of whole) within whole.
func fieldOffset(whole, sub []byte) int { return cap(whole) - cap(sub) }

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
