package connector

import (
	"encoding/binary"
	"math"
	"math/bits"
	"slices"

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
		// 16 bytes past the last id, so that a fixed 16-byte copy of any
		// id stays inside (transactions.appendRecord)
		t.flat = append(t.flat, make([]byte, 16)...)
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
	last uint64
	ok   bool
	nd   int // decimal digits of last
	// last in decimal, right-aligned to idEnd, '0'-filled on the left;
	// the 16 bytes after idEnd let a fixed 16-byte copy read any tail
	digits [idEnd + 16]byte
}

// idEnd is where the digits of an idCounter end (uint64 has at most 20).
const idEnd = 20

// maxIDStep is the largest step added digit by digit.
const maxIDStep = 1 << 16

// advance makes n the counter's number (n already is: nothing to do, as
// when transactions.appendRecord hands its record to appendRecordSlow).
func (c *idCounter) advance(n uint64) {
	if c.ok && n == c.last {
		return
	}
	if !c.ok || n < c.last || n-c.last > maxIDStep {
		c.set(n)
		return
	}
	carry := n - c.last
	i := idEnd - 1
	for ; carry > 0; i-- {
		v := uint64(c.digits[i]-'0') + carry
		c.digits[i], carry = byte('0'+v%10), v/10
	}
	// the last digit written (i+1) is not 0: it took no carry out
	c.nd = max(c.nd, idEnd-1-i)
	c.last = n
}

func (c *idCounter) append(b []byte, prefix string, n uint64, width int) []byte {
	c.advance(n)
	l := max(width, c.nd)
	if len(prefix)+l > 31 {
		return appendID(b, prefix, n, width)
	}
	b = append(b, byte(0xa0+len(prefix)+l)) // fixstr
	b = append(b, prefix...)
	return append(b, c.digits[idEnd-l:idEnd]...)
}

func (c *idCounter) set(n uint64) {
	for i := range c.digits[:idEnd] {
		c.digits[i] = '0'
	}
	for i, v := idEnd-1, n; v > 0; i, v = i-1, v/10 {
		c.digits[i] = byte('0' + v%10)
	}
	c.last, c.ok, c.nd = n, true, digits(n)
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

	// the same as arrays, for transactions.appendRecord's fixed-size copies
	arrTxnID      = [6]byte(keyTxnID)
	arrAccountID  = [10]byte(keyAccountID)
	arrAmount     = [7]byte(keyAmount)
	arrCurrency   = [9]byte(keyCurrency)
	arrCountry    = [8]byte(keyCountry)
	arrTS         = [3]byte(keyTS)
	arrCurrencies = [3][4]byte{[4]byte(currencies[0]), [4]byte(currencies[1]), [4]byte(currencies[2])}
	arrCountries  = func() (a [8][4]byte) {
		for i, c := range countries {
			copy(a[i][:], c) // 3 bytes, the 4th written over by what follows
		}
		return a
	}()
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
	fast     bool // appendRecord may write in place (ids in a table of at most 16 bytes each, a short hot key)
}

func newTransactions(seed int64, accounts int64, hot hotKey) *transactions {
	t := &transactions{seed: seedFor(seed, presetTransactions), accounts: uint64(accounts),
		ids: newIDTable("acct-", uint64(accounts), 4), hot: hot}
	t.fast = t.ids.flat != nil && t.ids.stride <= 16 && len(hot.key) <= maxHotFast
	return t
}

// txnRoom is what transactions.appendRecord writes into at most: the
// fixed parts (73 bytes), the digits of a txn id (up to 15), an account id
// (up to maxHotFast) and an amount (up to 3). Its fixed 16-byte copies may
// run past the end of a part; what follows writes over those bytes, and
// the last part is exact.
const (
	maxHotFast = 32
	txnRoom    = 73 + 15 + maxHotFast + 3
)

// appendRecord is appendRecordSlow's record written in place: one check
// of the room, then stores of fixed size (the generator is a share of a
// whole pipeline's CPU, and each small append was a call to memmove).
// Records it cannot write (an event time below 2^32, a txn id of more
// than 15 digits) go to appendRecordSlow; TestTransactionsFastPath holds
// the two byte-identical.
func (t *transactions) appendRecord(b []byte, n uint64) []byte {
	ts := tsEpoch + int64(n)
	c := &t.txnIDs
	c.advance(n)
	l := max(9, c.nd)
	if !t.fast || ts <= math.MaxUint32 || l > 15 {
		return t.appendRecordSlow(b, n)
	}
	if cap(b)-len(b) < txnRoom {
		b = slices.Grow(b, txnRoom)
	}
	o := len(b)
	p := b[o : o+txnRoom]
	d := newDraws(t.seed, n)
	// [ts, nil, {txnId: "t" + l digits, ...
	p[0], p[1] = 0x93, 0xcf
	binary.BigEndian.PutUint64(p[2:10], uint64(ts))
	p[10], p[11] = 0xc0, 0x86
	*(*[6]byte)(p[12:]) = arrTxnID
	p[18], p[19] = byte(0xa0+1+l), 't'
	*(*[16]byte)(p[20:]) = *(*[16]byte)(c.digits[idEnd-l:])
	i := 20 + l
	// accountId
	*(*[10]byte)(p[i:]) = arrAccountID
	i += 10
	if t.hot.hot(d.draw(0)) {
		i += copy(p[i:], t.hot.key)
	} else {
		s := int(below(d.draw(1), t.accounts)) * t.ids.stride
		*(*[16]byte)(p[i:]) = *(*[16]byte)(t.ids.flat[s:])
		i += t.ids.stride
	}
	// amount, as abi.AppendInt writes one in [-10000, 10000]
	*(*[7]byte)(p[i:]) = arrAmount
	i += 7
	switch a := int64(below(d.draw(2), 20001)) - 10000; {
	case a >= -32 && a <= 0x7f:
		p[i] = byte(int8(a))
		i++
	case a > 0 && a <= math.MaxUint8:
		p[i], p[i+1] = 0xcc, byte(a)
		i += 2
	case a > 0:
		p[i], p[i+1], p[i+2] = 0xcd, byte(a>>8), byte(a)
		i += 3
	case a >= math.MinInt8:
		p[i], p[i+1] = 0xd0, byte(int8(a))
		i += 2
	default:
		p[i], p[i+1], p[i+2] = 0xd1, byte(uint16(int16(a))>>8), byte(int16(a))
		i += 3
	}
	// currency, country, ts
	r := d.draw(3)
	*(*[9]byte)(p[i:]) = arrCurrency
	*(*[4]byte)(p[i+9:]) = arrCurrencies[below(r, 3)]
	i += 13
	*(*[8]byte)(p[i:]) = arrCountry
	*(*[4]byte)(p[i+8:]) = arrCountries[r&7]
	i += 11
	*(*[3]byte)(p[i:]) = arrTS
	p[i+3] = 0xcf
	binary.BigEndian.PutUint64(p[i+4:i+12], uint64(ts))
	return b[:o+i+12]
}

// appendRecordSlow is the transactions record made of appends, for any
// options and any n.
func (t *transactions) appendRecordSlow(b []byte, n uint64) []byte {
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

// sensors: {deviceId: "sensor-042", ts, value: float with two decimals},
// the value in [-10, 30], or for sensorSpikePercent % of the readings a
// spike in [50, 90], so that a threshold above the normal range (an alert,
// a side output) has something to find.
const sensorSpikePercent = 3

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
	if below(d.draw(3), 100) < sensorSpikePercent { // a spike: what an alert is for
		v = float64(5000+int64(below(d.draw(4), 4001))) / 100
	}
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
