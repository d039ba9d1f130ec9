package connector

import (
	"math/bits"

	"github.com/sluicehq/sluice/abi"
)

// The generator's presets. Record n of a preset depends only on (seed,
// preset, preset options, n): every random draw comes from a splitmix64
// hash of the seed and n, so subtasks generate their records independently
// and any parallelism yields the same records.

// preset appends the envelope of record n to b, without allocating.
type preset interface {
	appendRecord(b []byte, n uint64) []byte
}

// Presets, as named in the YAML.
const (
	presetTransactions = "transactions"
	presetSensors      = "sensors"
	presetWords        = "words"
	presetSequence     = "sequence"
)

// tsEpoch is the event time of record 0: 2024-01-01T00:00:00Z in ms.
// Record n has ts = tsEpoch + n.
const tsEpoch int64 = 1_704_067_200_000

const golden = 0x9e3779b97f4a7c15

// mix64 is splitmix64's finaliser.
func mix64(z uint64) uint64 {
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// seedFor mixes the user's seed with the preset name, so that presets
// sharing a seed do not share draws.
func seedFor(seed int64, preset string) uint64 {
	h := uint64(14695981039346656037) // FNV-1a
	for i := 0; i < len(preset); i++ {
		h = (h ^ uint64(preset[i])) * 1099511628211
	}
	return mix64(uint64(seed) ^ h)
}

// draws are the random numbers of one record: draw(k) is its k-th.
type draws uint64

func newDraws(seed, n uint64) draws { return draws(mix64(seed + n*golden)) }

func (d draws) draw(k uint64) uint64 { return mix64(uint64(d) + k*golden) }

// below maps a random r to [0, m) (Lemire's multiply-shift).
func below(r, m uint64) uint64 {
	hi, _ := bits.Mul64(r, m)
	return hi
}

// hotKey decides which records carry the hot key: a share skew of them.
type hotKey struct {
	key      []byte // msgpack string
	all      bool   // skew is 1
	belowThr uint64 // r < belowThr means hot
}

func newHotKey(key string, skew float64) hotKey {
	h := hotKey{key: abi.AppendStr(nil, key)}
	switch {
	case skew >= 1:
		h.all = true
	case skew > 0:
		if f := skew * (1 << 64); f < 1<<64 {
			h.belowThr = uint64(f)
		} else {
			h.all = true
		}
	}
	return h
}

func (h *hotKey) hot(r uint64) bool { return h.all || r < h.belowThr }

// appendID appends the msgpack string prefix + v in decimal, zero-padded
// to width digits. It reserves the string with '0's and writes the digits
// in place, two at a time.
func appendID(b []byte, prefix string, v uint64, width int) []byte {
	l := len(prefix) + max(width, digits(v))
	b = abi.AppendStrBytes(b, zeros[:l])
	copy(b[len(b)-l:], prefix)
	i := len(b)
	for v >= 100 {
		q := v / 100
		r := (v - q*100) * 2
		b[i-1], b[i-2] = pairs[r+1], pairs[r]
		i -= 2
		v = q
	}
	if v >= 10 {
		b[i-1], b[i-2] = pairs[v*2+1], pairs[v*2]
	} else {
		b[i-1] = byte('0' + v)
	}
	return b
}

var zeros = [64]byte{'0', '0', '0', '0', '0', '0', '0', '0', '0', '0', '0', '0', '0', '0', '0', '0',
	'0', '0', '0', '0', '0', '0', '0', '0', '0', '0', '0', '0', '0', '0', '0', '0',
	'0', '0', '0', '0', '0', '0', '0', '0', '0', '0', '0', '0', '0', '0', '0', '0',
	'0', '0', '0', '0', '0', '0', '0', '0', '0', '0', '0', '0', '0', '0', '0', '0'}

const pairs = "00010203040506070809101112131415161718192021222324252627282930313233343536373839" +
	"40414243444546474849505152535455565758596061626364656667686970717273747576777879" +
	"8081828384858687888990919293949596979899"

// digits is the number of decimal digits of v.
func digits(v uint64) int {
	n := 1
	for p := uint64(10); n < 20 && v >= p; p *= 10 {
		n++
	}
	return n
}

// idTable holds the msgpack strings prefix + zero-padded i for i < n,
// all of one length, so that a record copies its id instead of formatting
// it. Above maxIDTable ids are formatted per record.
type idTable struct {
	prefix string
	width  int
	stride int
	flat   []byte
}

const maxIDTable = 1 << 16

func newIDTable(prefix string, n uint64, minWidth int) idTable {
	t := idTable{prefix: prefix, width: max(minWidth, digits(n-1))}
	if n <= maxIDTable {
		for i := uint64(0); i < n; i++ {
			t.flat = appendID(t.flat, prefix, i, t.width)
		}
		t.stride = len(t.flat) / int(n)
	}
	return t
}

func (t *idTable) append(b []byte, i uint64) []byte {
	if t.flat != nil {
		o := int(i) * t.stride
		return append(b, t.flat[o:o+t.stride]...)
	}
	return appendID(b, t.prefix, i, t.width)
}

// idCounter is appendID for a subtask's ids, which come in steps (n,
// n+p, n+2p, ...): it keeps the digits of the last one and adds the step
// to them, carrying, instead of converting every number (a third of the
// transactions preset's time). Any other n is converted afresh.
type idCounter struct {
	last   uint64
	ok     bool
	digits [20]byte // last in decimal, right-aligned, '0'-filled on the left
}

// maxIDStep is the largest step added digit by digit.
const maxIDStep = 1 << 16

func (c *idCounter) append(b []byte, prefix string, n uint64, width int) []byte {
	if !c.ok || n <= c.last || n-c.last > maxIDStep {
		c.set(n)
	} else {
		carry := n - c.last
		for i := len(c.digits) - 1; carry > 0; i-- {
			v := uint64(c.digits[i]-'0') + carry
			c.digits[i], carry = byte('0'+v%10), v/10
		}
		c.last = n
	}
	l := max(width, digits(n))
	if len(prefix)+l > 31 || l > len(c.digits) {
		return appendID(b, prefix, n, width)
	}
	b = append(b, byte(0xa0+len(prefix)+l)) // fixstr
	b = append(b, prefix...)
	return append(b, c.digits[len(c.digits)-l:]...)
}

func (c *idCounter) set(n uint64) {
	for i := range c.digits {
		c.digits[i] = '0'
	}
	for i, v := len(c.digits)-1, n; v > 0; i, v = i-1, v/10 {
		c.digits[i] = byte('0' + v%10)
	}
	c.last, c.ok = n, true
}

func encodeStrs(ss ...string) [][]byte {
	out := make([][]byte, len(ss))
	for i, s := range ss {
		out[i] = abi.AppendStr(nil, s)
	}
	return out
}

var (
	keyTxnID     = abi.AppendStr(nil, "txnId")
	keyAccountID = abi.AppendStr(nil, "accountId")
	keyAmount    = abi.AppendStr(nil, "amount")
	keyCurrency  = abi.AppendStr(nil, "currency")
	keyCountry   = abi.AppendStr(nil, "country")
	keyTS        = abi.AppendStr(nil, "ts")
	keyDeviceID  = abi.AppendStr(nil, "deviceId")
	keyValue     = abi.AppendStr(nil, "value")
	keyLine      = abi.AppendStr(nil, "line")
	keyN         = abi.AppendStr(nil, "n")

	currencies = encodeStrs("EUR", "USD", "GBP")
	countries  = encodeStrs("NL", "DE", "US", "FR", "GB", "ES", "IT", "BE")
)

// transactions: {txnId: "t000000042", accountId: "acct-0042", amount:
// int64 in [-10000, 10000] (cents; about half are > 0), currency, country,
// ts}.
type transactions struct {
	seed     uint64
	accounts uint64
	ids      idTable
	hot      hotKey
	txnIDs   idCounter
}

func newTransactions(seed int64, accounts int64, hot hotKey) *transactions {
	return &transactions{seed: seedFor(seed, presetTransactions), accounts: uint64(accounts),
		ids: newIDTable("acct-", uint64(accounts), 4), hot: hot}
}

func (t *transactions) appendRecord(b []byte, n uint64) []byte {
	d := newDraws(t.seed, n)
	ts := tsEpoch + int64(n)
	b = abi.AppendInt(abi.AppendArrayHeader(b, 3), ts)
	b = abi.AppendMapHeader(abi.AppendNil(b), 6)
	b = t.txnIDs.append(append(b, keyTxnID...), "t", n, 9)
	b = append(b, keyAccountID...)
	if t.hot.hot(d.draw(0)) {
		b = append(b, t.hot.key...)
	} else {
		b = t.ids.append(b, below(d.draw(1), t.accounts))
	}
	b = abi.AppendInt(append(b, keyAmount...), int64(below(d.draw(2), 20001))-10000)
	r := d.draw(3)
	b = append(append(b, keyCurrency...), currencies[below(r, 3)]...)
	b = append(append(b, keyCountry...), countries[r&7]...)
	return abi.AppendInt(append(b, keyTS...), ts)
}

// sensors: {deviceId: "sensor-042", ts, value: float in [-10, 30] with two
// decimals}.
type sensors struct {
	seed    uint64
	devices uint64
	ids     idTable
	hot     hotKey
}

func newSensors(seed int64, devices int64, hot hotKey) *sensors {
	return &sensors{seed: seedFor(seed, presetSensors), devices: uint64(devices),
		ids: newIDTable("sensor-", uint64(devices), 3), hot: hot}
}

func (s *sensors) appendRecord(b []byte, n uint64) []byte {
	d := newDraws(s.seed, n)
	ts := tsEpoch + int64(n)
	b = abi.AppendInt(abi.AppendArrayHeader(b, 3), ts)
	b = abi.AppendMapHeader(abi.AppendNil(b), 3)
	b = append(b, keyDeviceID...)
	if s.hot.hot(d.draw(0)) {
		b = append(b, s.hot.key...)
	} else {
		b = s.ids.append(b, below(d.draw(1), s.devices))
	}
	b = abi.AppendInt(append(b, keyTS...), ts)
	v := float64(int64(below(d.draw(2), 4001))-1000) / 100
	return abi.AppendFloat(append(b, keyValue...), v)
}

// vocabulary of the words preset; early words are drawn more often.
var vocabulary = [64]string{
	"the", "a", "to", "and", "of", "stream", "data", "flink",
	"record", "key", "window", "time", "event", "state", "sink", "source",
	"fast", "slow", "river", "sluice", "water", "gate", "flow", "batch",
	"quick", "brown", "fox", "jumps", "over", "lazy", "dog", "hello",
	"world", "count", "word", "map", "filter", "reduce", "join", "merge",
	"split", "late", "early", "watermark", "barrier", "checkpoint", "task", "slot",
	"chain", "edge", "queue", "buffer", "shuffle", "hash", "group", "partition",
	"operator", "plugin", "wasm", "host", "guest", "memory", "table", "query",
}

// words: {line: 3 to 12 words from the vocabulary, separated by spaces}.
type words struct{ seed uint64 }

func (w *words) appendRecord(b []byte, n uint64) []byte {
	d := newDraws(w.seed, n)
	count := 3 + below(d.draw(0), 10)
	var s [12 * 16]byte
	l := 0
	for i := uint64(0); i < count; i++ {
		r := d.draw(1 + i)
		word := vocabulary[min(r>>58, (r>>52)&63)] // min of two draws: skewed
		if i > 0 {
			s[l] = ' '
			l++
		}
		l += copy(s[l:], word)
	}
	b = abi.AppendMapHeader(appendNoTimeNoKey(b), 1)
	return abi.AppendStrBytes(append(b, keyLine...), s[:l])
}

// sequence: {n}.
type sequence struct{}

func (sequence) appendRecord(b []byte, n uint64) []byte {
	b = abi.AppendMapHeader(appendNoTimeNoKey(b), 1)
	return abi.AppendInt(append(b, keyN...), int64(n))
}

// appendNoTimeNoKey starts an envelope without event time and key: what
// follows is the value.
func appendNoTimeNoKey(b []byte) []byte {
	return abi.AppendNil(abi.AppendNil(abi.AppendArrayHeader(b, 3)))
}
