package runtime

import (
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/sluicehq/sluice/abi"
)

// fakePlugins implements Plugins with small native operators named after
// what they do. Config "at" of "failing" is the n it fails on.
type fakePlugins struct {
	open atomic.Int64
}

func newFakePlugins() *fakePlugins { return &fakePlugins{} }

// fakeOp runs fn per record; fn emits through emit(port, value).
type fakeOp struct {
	p      *fakePlugins
	ctx    *OpenContext
	fn     func(o *fakeOp, input int, r abi.Record, emit func(port int, v []byte)) error
	w      []abi.Writer
	closed bool
}

func (p *fakePlugins) Operator(opID, plugin string, subtask int) (Operator, error) {
	var fn func(o *fakeOp, input int, r abi.Record, emit func(int, []byte)) error
	switch plugin {
	case "double": // map: n -> 2n
		fn = func(_ *fakeOp, _ int, r abi.Record, emit func(int, []byte)) error {
			emit(0, setField(r.Value, "n", abi.AppendInt(nil, 2*intField(r.Value, "n"))))
			return nil
		}
	case "even": // filter
		fn = func(_ *fakeOp, _ int, r abi.Record, emit func(int, []byte)) error {
			if intField(r.Value, "n")%2 == 0 {
				emit(0, r.Value)
			}
			return nil
		}
	case "twice": // flat-map
		fn = func(_ *fakeOp, _ int, r abi.Record, emit func(int, []byte)) error {
			emit(0, r.Value)
			emit(0, r.Value)
			return nil
		}
	case "route": // process: multiples of 3 to "fizz", of 5 to "buzz", the rest main
		fn = func(o *fakeOp, _ int, r abi.Record, emit func(int, []byte)) error {
			switch n := intField(r.Value, "n"); {
			case n%3 == 0:
				emit(o.ctx.Port("fizz"), r.Value)
			case n%5 == 0:
				emit(o.ctx.Port("buzz"), r.Value)
			default:
				emit(0, r.Value)
			}
			return nil
		}
	case "side": // co-map: marks the input
		fn = func(_ *fakeOp, input int, r abi.Record, emit func(int, []byte)) error {
			emit(0, setField(r.Value, "input", abi.AppendInt(nil, int64(input))))
			return nil
		}
	case "reducesum": // keyed reduce of n through host state
		fn = func(o *fakeOp, _ int, r abi.Record, emit func(int, []byte)) error {
			if o.ctx.State == nil {
				return errors.New("reduce without state")
			}
			n := intField(r.Value, "n")
			old, ok, err := o.ctx.State.Get(0, r.Key, nil)
			if err != nil {
				return err
			}
			if ok {
				n += intField(old, "n")
			}
			v := setField(r.Value, "n", abi.AppendInt(nil, n))
			if err := o.ctx.State.Put(0, r.Key, v); err != nil {
				return err
			}
			emit(0, v)
			return nil
		}
	case "failing": // map that fails on n == config "at"
		fn = func(o *fakeOp, _ int, r abi.Record, emit func(int, []byte)) error {
			if intField(r.Value, "n") == int64(o.ctx.Config["at"].(int)) {
				return fmt.Errorf("refusing n=%d", intField(r.Value, "n"))
			}
			emit(0, r.Value)
			return nil
		}
	default:
		return nil, fmt.Errorf("fake: no plugin %q", plugin)
	}
	p.open.Add(1)
	return &fakeOp{p: p, fn: fn}, nil
}

func (o *fakeOp) Open(ctx *OpenContext) error { o.ctx = ctx; return nil }

func (o *fakeOp) Process(input int, b []byte, count int, out Collector) error {
	rd := abi.NewReader(b, count)
	var err error
	var cur abi.Record
	emit := func(port int, v []byte) { // keeps the record's time and key
		if port < 0 {
			return
		}
		for len(o.w) <= port {
			o.w = append(o.w, abi.Writer{})
		}
		o.w[port].Append(cur.Time, cur.HasTime, cur.Key, v)
	}
	for rd.Next() && err == nil {
		cur = rd.Record()
		err = o.fn(o, input, cur, emit)
	}
	if err == nil {
		err = rd.Err()
	}
	for port := range o.w {
		if err == nil && o.w[port].Count > 0 {
			err = out.Emit(port, o.w[port].Buf, o.w[port].Count)
		}
		o.w[port].Reset()
	}
	return err
}

func (o *fakeOp) Close(Collector) error {
	if o.closed {
		return errors.New("fake operator closed twice")
	}
	o.closed = true
	o.p.open.Add(-1)
	return nil
}

func (p *fakePlugins) Partitioner(plugin, from, to string, subtask int) (CustomPartitioner, error) {
	switch plugin {
	case "mod", "off-by-one":
		p.open.Add(1)
		return &fakePartitioner{p: p, off: plugin == "off-by-one"}, nil
	case "first":
		p.open.Add(1)
		return &fakePartitioner{p: p, first: true}, nil
	}
	return nil, fmt.Errorf("fake: no partitioner %q", plugin)
}

// fakePartitioner sends an int key k to k mod n (off-by-one: to n when k
// is 7, an invalid channel).
type fakePartitioner struct {
	p     *fakePlugins
	off   bool
	first bool // the key is a tuple [k, ...]: k mod n
}

func (f *fakePartitioner) Partition(b []byte, count, n int, out []int32) error {
	rd := abi.NewReader(b, count)
	for i := 0; rd.Next(); i++ {
		key := rd.Record().Key
		if f.first {
			if n, off, err := abi.Len(key); err != nil || abi.TypeOf(key) != abi.TypeArray || n < 2 {
				return fmt.Errorf("fake first: key % x is not a tuple", key)
			} else {
				key = key[off:]
			}
		}
		k, err := abi.ReadInt(firstValue(key))
		if err != nil {
			return err
		}
		out[i] = int32(k % int64(n))
		if f.off && k == 7 {
			out[i] = int32(n)
		}
	}
	return rd.Err()
}

func (f *fakePartitioner) Close() error { f.p.open.Add(-1); return nil }

func (p *fakePlugins) KeySelector(plugin, from, to string, subtask int) (KeySelector, error) {
	if plugin != "mod3" {
		return nil, fmt.Errorf("fake: no key selector %q", plugin)
	}
	p.open.Add(1)
	return &fakeSelector{p: p}, nil
}

// fakeSelector keys a record by n mod 3.
type fakeSelector struct{ p *fakePlugins }

func (f *fakeSelector) Keys(b []byte, count int, dst []byte) ([]byte, error) {
	rd := abi.NewReader(b, count)
	for rd.Next() {
		dst = abi.AppendInt(dst, intField(rd.Record().Value, "n")%3)
	}
	return dst, rd.Err()
}

func (f *fakeSelector) Close() error { f.p.open.Add(-1); return nil }

// firstValue is the first msgpack value of b.
func firstValue(b []byte) []byte {
	end, err := abi.Skip(b, 0)
	if err != nil {
		return b
	}
	return b[:end]
}
