package partition

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"unicode/utf8"

	"github.com/sluicehq/sluice/abi"
)

// LargeBatch is the record count of CheckCustom's large-batch check.
const LargeBatch = 10000

// SampleKeys returns n distinct msgpack keys of the scalar and composite
// kinds abi.KeyHash accepts: ints (negative ones too), strings (non-ASCII
// ones too), floats, bools and two-field composite keys.
func SampleKeys(n int) [][]byte {
	keys := make([][]byte, 0, max(n, 0))
	for i := 0; len(keys) < n; i++ {
		var k []byte
		switch i % 5 {
		case 0:
			k = abi.AppendInt(nil, int64(i/5)*7919-100000)
		case 1:
			k = abi.AppendStr(nil, "key-"+strconv.Itoa(i)+[]string{"", "-ü", "-日本", "-😀"}[i%4])
		case 2:
			k = abi.AppendFloat(nil, float64(i)+0.25)
		case 3:
			k = abi.AppendArrayHeader(nil, 2)
			k = abi.AppendStr(k, "user-"+strconv.Itoa(i))
			k = abi.AppendInt(k, int64(i))
		case 4:
			if i == 4 || i == 9 {
				k = abi.AppendBool(nil, i == 4)
			} else {
				k = abi.AppendInt(nil, int64(i)<<33) // a Java Long
			}
		}
		keys = append(keys, k)
	}
	return keys
}

// CustomChecks names CheckCustom's rows in order (after "config", which
// shows only for a bad n).
var CustomChecks = []string{"empty batch", "range", "no write past count", "same key, same batch",
	"deterministic", "key order", "batching", "large batch", "single channel"}

// CheckCustom runs user partitioner p (a plugin's included) through the
// rules of flink-semantics.md §2 with n channels, one record per key of
// keys (raw msgpack; SampleKeys(1000) when empty), and checks: an empty
// batch works and writes nothing; every channel is in [0, n); nothing is
// written past out[count]; equal keys get equal channels within a batch,
// across two calls, with the keys in reverse order and in batches of 1 and
// 7; a batch of LargeBatch records works; with n = 1 every channel is 0. A
// panic in p is a failure, not a crash.
func CheckCustom(p BatchPartitioner, keys [][]byte, n int) Report {
	var r Report
	if n < 1 || n > MaxParallelismUpperBound {
		r.add("config", fmt.Sprintf("n %d not within bounds [1, %d]", n, MaxParallelismUpperBound), "")
		return r
	}
	sampled := len(keys) == 0
	if sampled {
		keys = SampleKeys(1000)
	}
	// empty batch
	out := []int32{-7}
	err := callCustom(p, n, nil, out[:0:1])
	switch {
	case err != nil:
		r.add("empty batch", err.Error(), "")
	case out[0] != -7:
		r.add("empty batch", fmt.Sprintf("wrote out[0] = %d for a batch of 0 records", out[0]), "")
	default:
		r.add("empty batch", "", "0 records")
	}
	// range and the channel of each key
	const pad = 8
	out = make([]int32, len(keys)+pad)
	for i := range out {
		out[i] = -7
	}
	err = callCustom(p, n, keys, out[:len(keys)])
	if err != nil {
		r.add("range", err.Error()+failingKey(p, n, keys, sampled), "")
		r.Skip("range failed", CustomChecks[2:]...)
		return r
	}
	r.add("range", "", fmt.Sprintf("%d records in [0, %d)", len(keys), n))
	past := ""
	if i := slices.IndexFunc(out[len(keys):], func(c int32) bool { return c != -7 }); i >= 0 {
		past = fmt.Sprintf("wrote out[%d] = %d past the %d records", len(keys)+i, out[len(keys)+i], len(keys))
	}
	r.add("no write past count", past, fmt.Sprintf("%d guard slots untouched", pad))
	want := map[string]int32{}
	dup := ""
	for i, k := range keys {
		if c, ok := want[string(k)]; ok && c != out[i] && dup == "" {
			dup = fmt.Sprintf("record %d: key %x to channel %d, an earlier equal key to %d", i, k, out[i], c)
		}
		want[string(k)] = out[i]
	}
	r.add("same key, same batch", dup, fmt.Sprintf("%d distinct keys", len(want)))
	// the same keys again, reordered and rebatched
	rev := slices.Clone(keys)
	slices.Reverse(rev)
	r.add("deterministic", agree(p, n, keys, len(keys), want), "the same batch twice")
	r.add("key order", agree(p, n, rev, len(rev), want), "keys in reverse order")
	r.add("batching", cmp.Or(agree(p, n, keys, 1, want), agree(p, n, rev, 7, want)), "batches of 1 and of 7")
	large := make([][]byte, LargeBatch)
	for i := range large {
		large[i] = keys[(i*7)%len(keys)]
	}
	r.add("large batch", agree(p, n, large, len(large), want), fmt.Sprintf("%d records", LargeBatch))
	one := make([]int32, len(keys))
	single := ""
	if err := callCustom(p, 1, keys, one); err != nil {
		single = err.Error()
	}
	r.add("single channel", single, "n = 1: every record to 0")
	return r
}

// agree partitions keys in batches of size and reports the first key whose
// channel differs from want.
func agree(p BatchPartitioner, n int, keys [][]byte, size int, want map[string]int32) string {
	out := make([]int32, size)
	for lo := 0; lo < len(keys); lo += size {
		part := keys[lo:min(lo+size, len(keys))]
		if err := callCustom(p, n, part, out[:len(part)]); err != nil {
			return fmt.Sprintf("batch at record %d of %d: %v", lo, len(part), err)
		}
		for i, k := range part {
			if out[i] != want[string(k)] {
				return fmt.Sprintf("record %d (batch of %d): key %x to channel %d, earlier to %d", lo+i, len(part), k, out[i], want[string(k)])
			}
		}
	}
	return ""
}

// callCustom builds a batch of keys (envelopes [nil, key, {}]) and runs it
// through Custom's checks, turning a panic into an error.
func callCustom(p BatchPartitioner, n int, keys [][]byte, out []int32) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("partitioner panicked: %v", v)
		}
	}()
	c, err := NewCustom(p, n)
	if err != nil {
		return err
	}
	var w abi.Writer
	for _, k := range keys {
		w.Append(0, false, k, []byte{0x80})
	}
	return c.Partition(w.Buf, w.Count, out)
}

// failingKey names the first of keys that p refuses on its own, for the
// message of a batch it refused, when it accepts some key alone (one that
// refuses every batch is not told a key is the problem); sampled: the
// keys are SampleKeys', every kind of key a key field may hold, which a
// partitioner written for one kind fails on.
func failingKey(p BatchPartitioner, n int, keys [][]byte, sampled bool) string {
	one := make([]int32, 1)
	refused := -1
	accepted := false
	for i, k := range keys {
		if callCustom(p, n, [][]byte{k}, one) != nil {
			if refused < 0 {
				refused = i
			}
		} else {
			accepted = true
		}
		if refused >= 0 && accepted {
			break
		}
	}
	if refused < 0 || !accepted {
		return ""
	}
	k := keys[refused]
	text, ok := appendKeyText(nil, k, 0)
	if !ok {
		text = fmt.Appendf(nil, "%x", k)
	}
	msg := fmt.Sprintf(" (the first key it refuses alone: key %d, %s, %s", refused+1, text, abi.TypeOf(k).Phrase())
	if sampled {
		msg += "; the kit's keys are ints, strings, floats, booleans and arrays, what a key field may hold"
	}
	return msg + ")"
}

// appendKeyText appends key (raw msgpack) as text for messages, in JSON's
// notation (null, true, -3, 1.5, "id-7", [1,"a"]; a string quoted as Go
// quotes it): what a key field may hold. ok is false for anything else (a map, binary data,
// malformed bytes, deeper than abi.MaxDepth), which the caller shows
// otherwise. The kit formats its keys itself: partition reads msgpack
// through abi only.
func appendKeyText(dst, key []byte, depth int) (out []byte, ok bool) {
	if depth > abi.MaxDepth {
		return dst, false
	}
	switch abi.TypeOf(key) {
	case abi.TypeNil:
		return append(dst, "null"...), true
	case abi.TypeBool:
		v, err := abi.ReadBool(key)
		return strconv.AppendBool(dst, v), err == nil
	case abi.TypeInt:
		v, err := abi.ReadInt(key)
		return strconv.AppendInt(dst, v, 10), err == nil
	case abi.TypeFloat:
		v, err := abi.ReadFloat(key)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			return dst, false
		}
		return strconv.AppendFloat(dst, v, 'g', -1, 64), true
	case abi.TypeStr:
		v, err := abi.ReadStr(key)
		if err != nil || !utf8.Valid(v) {
			return dst, false
		}
		return strconv.AppendQuote(dst, string(v)), true
	case abi.TypeArray:
		n, off, err := abi.Len(key)
		if err != nil {
			return dst, false
		}
		dst = append(dst, '[')
		for i := range n {
			end, err := abi.Skip(key, off)
			if err != nil {
				return dst, false
			}
			if i > 0 {
				dst = append(dst, ',')
			}
			if dst, ok = appendKeyText(dst, key[off:end], depth+1); !ok {
				return dst, false
			}
			off = end
		}
		return append(dst, ']'), true
	}
	return dst, false
}
