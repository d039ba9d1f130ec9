package langtest

import (
	"context"
	"encoding/hex"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/abi"
	"github.com/sluicehq/sluice/host/plugin"
	"github.com/sluicehq/sluice/host/runtime"
)

// These tests run every language's plugin through the real host
// (host/plugin, wazero) on the same batches and require the output of the
// C, Rust and AssemblyScript plugins to be byte-identical to the Go
// plugin's; a batch the Go plugin fails must fail in every language.

// ---- building records -------------------------------------------------------

// obj is a msgpack map given as key, value, key, value... (order kept).
type obj []any

// rawMsg is pre-encoded msgpack, written as it is.
type rawMsg []byte

func enc(b []byte, v any) []byte {
	switch x := v.(type) {
	case nil:
		return abi.AppendNil(b)
	case bool:
		return abi.AppendBool(b, x)
	case int:
		return abi.AppendInt(b, int64(x))
	case int64:
		return abi.AppendInt(b, x)
	case float64:
		return abi.AppendFloat(b, x)
	case float32:
		return append(append(b, 0xca), byte(math.Float32bits(x)>>24), byte(math.Float32bits(x)>>16), byte(math.Float32bits(x)>>8), byte(math.Float32bits(x)))
	case string:
		return abi.AppendStr(b, x)
	case []byte:
		return abi.AppendBin(b, x)
	case rawMsg:
		return append(b, x...)
	case []any:
		b = abi.AppendArrayHeader(b, len(x))
		for _, e := range x {
			b = enc(b, e)
		}
		return b
	case obj:
		b = abi.AppendMapHeader(b, len(x)/2)
		for _, e := range x {
			b = enc(b, e)
		}
		return b
	}
	panic(fmt.Sprintf("enc: %T", v))
}

// rec is one envelope: time (nil or an int), key (nil or any value), value.
type rec struct{ time, key, value any }

// batchOf encodes records as a batch.
func batchOf(recs ...rec) ([]byte, int) {
	var w abi.Writer
	for _, r := range recs {
		var key []byte
		if r.key != nil {
			key = enc(nil, r.key)
		}
		t, hasTime := int64(0), r.time != nil
		if hasTime {
			t = int64(r.time.(int))
		}
		w.Append(t, hasTime, key, enc(nil, r.value))
	}
	return w.Buf, w.Count
}

type batch struct {
	name  string
	bytes []byte
	count int
}

func mk(name string, recs ...rec) batch {
	b, n := batchOf(recs...)
	return batch{name, b, n}
}

// ---- running ------------------------------------------------------------------

// collector keeps what an operator emits, per port.
type collector struct{ out map[int]*abi.Writer }

func (c *collector) Emit(port int, buf []byte, count int) error {
	w := c.out[port]
	if w == nil {
		w = &abi.Writer{}
		c.out[port] = w
	}
	w.Buf = append(w.Buf, buf...)
	w.Count += count
	return nil
}

// result is one batch's outcome, comparable across languages.
type result struct {
	failed bool
	text   string // the error, or the output: port, count and hex bytes
}

func (r result) String() string { return r.text }

func newHost(t *testing.T) *plugin.Host {
	t.Helper()
	h, err := plugin.New(context.Background(), plugin.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close(context.Background()) })
	return h
}

func load(t *testing.T, h *plugin.Host, path string) *plugin.Module {
	t.Helper()
	readModule(t, path) // skips when not built
	m, err := h.LoadFile(context.Background(), path)
	if err != nil {
		t.Fatalf("load %s: %v", path, err)
	}
	return m
}

// runOperator opens an operator instance with config and runs each batch.
func runOperator(t *testing.T, m *plugin.Module, config map[string]any, batches []batch) []result {
	t.Helper()
	op := m.NewOperator(context.Background(), "op", config)
	if err := op.Open(&runtime.OpenContext{Operator: "op", Parallelism: 1, MaxParallelism: 128, Config: config}); err != nil {
		t.Fatalf("open: %v", err)
	}
	defer op.Close(nil)
	var res []result
	for _, b := range batches {
		c := &collector{out: map[int]*abi.Writer{}}
		if err := op.Process(0, b.bytes, b.count, c); err != nil {
			res = append(res, result{true, err.Error()})
			continue
		}
		var s strings.Builder
		for port := 0; port < 4; port++ {
			if w := c.out[port]; w != nil {
				fmt.Fprintf(&s, "port %d, %d records: %s\n", port, w.Count, hex.EncodeToString(w.Buf))
			}
		}
		res = append(res, result{false, s.String()})
	}
	return res
}

// same requires every language's results to match the Go plugin's.
func same(t *testing.T, lang string, batches []batch, want, got []result) {
	t.Helper()
	for i, b := range batches {
		w, g := want[i], got[i]
		switch {
		case w.failed && g.failed:
		case w.failed != g.failed:
			t.Errorf("%s, batch %q: go failed=%v, %s failed=%v\ngo:   %s\n%s: %s", lang, b.name, w.failed, lang, g.failed, w, lang, g)
		case w.text != g.text:
			t.Errorf("%s, batch %q: output differs from go\ngo:   %s%s: %s", lang, b.name, w, lang, g)
		}
	}
}

// ---- the plugins -----------------------------------------------------------------

func validBatches() []batch {
	var many []rec
	for i := 0; i < 2000; i++ {
		many = append(many, rec{i, fmt.Sprint("k", i%7), obj{"txnId", i, "amount", i%5 - 2, "note", strings.Repeat("x", i%40)}})
	}
	return []batch{
		mk("ints", rec{1, nil, obj{"amount", 10}}, rec{2, "k", obj{"amount", -5}}, rec{nil, nil, obj{"amount", 0}}, rec{4, []any{"a", 1}, obj{"x", 1, "amount", 7}}),
		mk("floats", rec{1, nil, obj{"amount", 1.5}}, rec{1, nil, obj{"amount", 0.5}}, rec{1, nil, obj{"amount", -2.5}},
			rec{1, nil, obj{"amount", math.NaN()}}, rec{1, nil, obj{"amount", math.Inf(1)}}, rec{1, nil, obj{"amount", math.Inf(-1)}},
			rec{1, nil, obj{"amount", 1e300}}, rec{1, nil, obj{"amount", float32(2.5)}}),
		mk("others", rec{1, nil, obj{"amount", "12"}}, rec{1, nil, obj{"amount", true}}, rec{1, nil, obj{"amount", nil}},
			rec{1, nil, obj{"other", 5}}, rec{1, nil, obj{}}, rec{1, nil, obj{"amount", rawMsg{0xcf, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}}},
			rec{1, nil, obj{"amount", rawMsg{0xd0, 0x05}}}, rec{1, nil, obj{1, 2, "amount", 3}}, rec{1, nil, []any{1, 2}}, rec{1, nil, "str"}),
		mk("empty"),
		mk("large", many...),
		{"truncated", []byte{0x93, 0xc0, 0xc0, 0x81, 0xa6}, 1},
		{"count too high", mk("", rec{1, nil, obj{"amount", 1}}).bytes, 2},
		{"trailing bytes", mk("", rec{1, nil, obj{"amount", 1}}, rec{2, nil, obj{"amount", 2}}).bytes, 1},
		{"time not an int", []byte{0x93, 0xa1, 'x', 0xc0, 0x80}, 1},
	}
}

func enrichBatches() []batch {
	var wide, wider obj
	for i := 0; i < 14; i++ {
		wide = append(wide, fmt.Sprint("f", i), i)
	}
	for i := 0; i < 20; i++ {
		wider = append(wider, fmt.Sprint("f", i), i)
	}
	map16 := rawMsg{0xde, 0, 2, 0xa1, 'a', 1, 0xa4, 'b', 'a', 'n', 'k', 2} // a non-canonical header
	str8Key := rawMsg{0x82, 0xd9, 4, 'b', 'a', 'n', 'k', 1, 0xa1, 'z', 2}  // "bank" as a str8
	dup := rawMsg{0x83, 0xa4, 'b', 'a', 'n', 'k', 1, 0xa1, 'x', 2, 0xa4, 'b', 'a', 'n', 'k', 3}
	return []batch{
		mk("records", rec{1, nil, obj{"amount", 1}}, rec{2, "k", obj{"bank", "X", "amount", 2}}, rec{nil, 7, obj{}},
			rec{3, nil, obj{1, "int key", "zone", 0}}),
		mk("headers", rec{1, nil, wide}, rec{1, nil, wider}, rec{1, nil, map16}, rec{1, nil, str8Key}, rec{1, nil, dup}),
		mk("empty"),
		mk("not a map", rec{1, nil, []any{1, 2}}),
		{"truncated", []byte{0x93, 0xc0, 0xc0, 0x82, 0xa1}, 1},
	}
}

// doubleBatches are valid's batches and edge cases of an edit in place:
// headers that are not fixmaps, keys that are not fixstrs, "amount" twice,
// amounts whose double needs a wider int or wraps, times encoded wider than
// they need.
func doubleBatches() []batch {
	var wide obj
	for i := 0; i < 15; i++ {
		wide = append(wide, fmt.Sprint("f", i), i)
	}
	wide[2*7] = "amount"
	return append(validBatches(),
		mk("edits",
			rec{1, nil, obj{"amount", 100}}, rec{1, nil, obj{"amount", int64(1) << 62}}, rec{1, nil, obj{"amount", int64(math.MaxInt64)}},
			rec{1, nil, obj{"amount", 70000, "x", "y"}}, rec{1, nil, wide},
			rec{1, nil, rawMsg{0xde, 0, 2, 0xa1, 'a', 1, 0xa6, 'a', 'm', 'o', 'u', 'n', 't', 2}},                                  // map16 header
			rec{1, nil, rawMsg{0x82, 0xd9, 6, 'a', 'm', 'o', 'u', 'n', 't', 3, 0xa1, 'z', 2}},                                     // "amount" as a str8
			rec{1, nil, rawMsg{0x83, 0xa6, 'a', 'm', 'o', 'u', 'n', 't', 4, 0xa1, 'x', 2, 0xa6, 'a', 'm', 'o', 'u', 'n', 't', 5}}, // twice
			rec{5, "key", obj{"amount", 7, "nested", obj{"amount", 1}}}),
		// times as a fixint and as a uint64, a fixstr key
		batch{"times", []byte{0x93, 0x05, 0xc0, 0x81, 0xa6, 'a', 'm', 'o', 'u', 'n', 't', 6,
			0x93, 0xcf, 0, 0, 0, 0, 0, 0, 0, 9, 0xa1, 'k', 0x81, 0xa6, 'a', 'm', 'o', 'u', 'n', 't', 7}, 2},
	)
}

func splitBatches() []batch {
	line := func(t any, key any, l any) rec { return rec{t, key, obj{"line", l}} }
	return []batch{
		mk("go test lines", line(9, nil, "To be, or not to be: that is the question."), line(nil, "k", "  Don't  PANIC!\t— “Ça va?” "),
			line(1, nil, "... !!"), rec{1, nil, obj{"text", "no line field"}}),
		mk("unicode", line(1, nil, "İSTANBUL ÇAĞ straße ΣΊΣΥΦΟΣ Ǆemal ⅫB Ⓐbc"), line(2, nil, "a\u00a0b\u3000c\u2028d\u0085e\u200bf"),
			line(3, nil, "«quoted» ¡Hola! ¿qué? 😀! -dash- (paren) [x] {y} a.b.c ...x..."),
			line(4, nil, "\xffbad\xc3 utf8\xe2\x80 \xed\xa0\x80 tail\xf0\x9f"), line(5, nil, "$100 +5 a=b ^_^ ~tilde~ `q`"),
			line(6, nil, []byte("bin LINE")), line(7, nil, 42), line(8, nil, nil), line(9, nil, ""), line(10, nil, strings.Repeat("Word, ", 3000))),
		mk("empty"),
		{"truncated", []byte{0x93, 0xc0, 0xc0, 0x81, 0xa4, 'l', 'i', 'n', 'e', 0xa5, 'a'}, 1},
	}
}

func TestOperatorsMatchGo(t *testing.T) {
	root := repoRoot(t)
	h := newHost(t)
	cases := []struct {
		name    string
		configs []map[string]any
		batches []batch
	}{
		{"valid", []map[string]any{nil}, validBatches()},
		{"double", []map[string]any{nil}, doubleBatches()},
		{"enrich", []map[string]any{
			{"bank": "NBI"},
			{"bank": "NBI", "zone": 7, "rate": 1.5, "flag": true, "none": nil, "list": []any{1, "a"}, "big": int64(1) << 40, "neg": -3, "long": strings.Repeat("y", 40)},
			nil,
		}, enrichBatches()},
		{"split", []map[string]any{nil}, splitBatches()},
	}
	for _, c := range cases {
		for ci, cfg := range c.configs {
			t.Run(fmt.Sprintf("%s/config%d", c.name, ci), func(t *testing.T) {
				want := runOperator(t, load(t, h, modulePath(root, c.name, "go")), cfg, c.batches)
				for _, lang := range languages {
					got := runOperator(t, load(t, h, modulePath(root, c.name, lang)), cfg, c.batches)
					same(t, lang, c.batches, want, got)
				}
			})
		}
	}
}

func TestCountryMatchesGo(t *testing.T) {
	root := repoRoot(t)
	h := newHost(t)
	var recs []rec
	for _, k := range []any{"NL", "DE", "FR", "BE", "", "ÅLAND", "😀", 42, -7, int64(1) << 40, 1.5, float32(2.5), true, false,
		[]any{"NL", 1}, []byte("NL"), "12", "true"} {
		recs = append(recs, rec{nil, k, obj{"x", 1}})
	}
	good := mk("keys", recs...)
	bad := []batch{mk("nil key", rec{1, nil, obj{}}), mk("map key", rec{1, obj{"a", 1}, obj{}}), mk("nested key", rec{1, []any{[]any{1}}, obj{}})}
	for _, cfg := range []map[string]any{nil, {"hot": "DE"}, {"hot": 12}, {"hot": true}, {"hot": nil}, {"hot": "ÅLAND"}} {
		for _, n := range []int{1, 2, 3, 4, 7, 16} {
			t.Run(fmt.Sprintf("hot=%v/n=%d", cfg["hot"], n), func(t *testing.T) {
				want := partition(t, load(t, h, modulePath(root, "country", "go")), cfg, append([]batch{good}, bad...), n)
				for _, lang := range languages {
					got := partition(t, load(t, h, modulePath(root, "country", lang)), cfg, append([]batch{good}, bad...), n)
					same(t, lang, append([]batch{good}, bad...), want, got)
				}
			})
		}
	}
}

func partition(t *testing.T, m *plugin.Module, cfg map[string]any, batches []batch, n int) []result {
	t.Helper()
	p, err := m.NewPartitioner(context.Background(), "src", "dst", 0, 1, 128, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	var res []result
	for _, b := range batches {
		out := make([]int32, b.count)
		err := p.Partition(b.bytes, b.count, n, out)
		for _, ch := range out {
			if ch < 0 || int(ch) >= n {
				err = fmt.Errorf("channel %d outside [0, %d)", ch, n)
			}
		}
		if err != nil {
			res = append(res, result{true, err.Error()})
			continue
		}
		res = append(res, result{false, fmt.Sprint(out)})
	}
	return res
}

// TestIdentityWAT: the hand-written module passes valid batches on byte
// for byte and refuses malformed ones with a status.
func TestIdentityWAT(t *testing.T) {
	h := newHost(t)
	m := load(t, h, filepath.Join(repoRoot(t), "plugins/wat/identity.wasm"))
	batches := validBatches()
	for i, r := range runOperator(t, m, nil, batches) {
		b := batches[i]
		if strings.Contains(b.name, "trunc") || strings.Contains(b.name, "count") || strings.Contains(b.name, "trailing") || strings.Contains(b.name, "time") {
			if !r.failed {
				t.Errorf("batch %q: accepted malformed input", b.name)
			}
			continue
		}
		want := ""
		if b.count > 0 {
			want = fmt.Sprintf("port 0, %d records: %s\n", b.count, hex.EncodeToString(b.bytes))
		}
		if r.failed || r.text != want {
			t.Errorf("batch %q: got %s", b.name, r)
		}
	}
}

// TestDescribe: every module describes itself as its Go twin, with its SDK.
func TestDescribe(t *testing.T) {
	root := repoRoot(t)
	h := newHost(t)
	sdks := map[string]string{"c": "c", "rust": "rust", "as": "assemblyscript"}
	for _, name := range pluginNames {
		goInfo, err := load(t, h, modulePath(root, name, "go")).Inspect(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, lang := range languages {
			info, err := load(t, h, modulePath(root, name, lang)).Inspect(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if info.Kind != goInfo.Kind || info.Title != name || info.SDK != sdks[lang] || info.KindFrom != "sluice_describe" {
				t.Errorf("%s-%s: kind %q (go: %q) title %q sdk %q from %s", name, lang, info.Kind, goInfo.Kind, info.Title, info.SDK, info.KindFrom)
			}
		}
	}
}
