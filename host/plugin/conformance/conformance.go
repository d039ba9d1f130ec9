// Package conformance is the plugin conformance kit: it runs a plugin
// module through the obligations of ABI v1 with the real host
// (host/plugin) and returns a PASS/FAIL table, in the manner of the
// partitioner kit (partition.CheckPartitioner, partition.CheckCustom),
// so that `host plugin check` and Go tests (conformancetest) share it.
//
// The checks: the module loads (the ABI marker, the exports, the imports
// and the memory, as Host.Load checks them); describe reports a known kind
// (and the one asked for, if any); an operator opens with an empty config,
// takes an empty batch (emitting nothing) and a large batch of
// transactions-like records, answers malformed input (a truncated batch, a
// count larger than the records, a record that is not an envelope) with
// the malformed-input status rather than a trap or another status, keeps working afterwards, emits only
// well-formed count envelopes, gives the same output for the same input on
// a fresh instance, and closes. A partitioner goes through
// partition.CheckCustom and the same malformed input; a key selector
// through the empty, large, malformed and determinism checks.
package conformance

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/sluicehq/sluice/abi"
	"github.com/sluicehq/sluice/host/pipeline"
	"github.com/sluicehq/sluice/host/plugin"
	"github.com/sluicehq/sluice/host/runtime"
	"github.com/sluicehq/sluice/partition"
)

// LargeBatch is the default record count of the large-batch check.
const LargeBatch = 10000

// Report is the result table, one row per check (partition's type, so
// that a partitioner's rows from partition.CheckCustom join it as they are).
type Report = partition.Report

// Result is one row of a Report.
type Result = partition.Result

// Options tune a run. The zero value checks with the kind the plugin
// describes, an empty config and LargeBatch records.
type Options struct {
	// Kind, when set, is the kind the plugin must be (and is run as when
	// it does not export sluice_describe).
	Kind abi.Kind
	// Config is the operator's config at open; nil is an empty config.
	Config map[string]any
	// Records is the size of the large batch; 0 is LargeBatch.
	Records int
	// Channels is the partitioner's channel count; 0 is 4.
	Channels int
	// Host runs the plugin; nil makes one with plugin.DefaultConfig (with
	// CheckOutput on) for the run.
	Host *plugin.Host
}

// KnownKind reports whether k is a kind the kit can run: every kind.
func KnownKind(k abi.Kind) bool { return k.Known() }

// report builds a Report row by row.
type report struct{ r Report }

// skip appends a skipped row for each of checks.
func (r *report) skip(why string, checks ...string) { r.r.Skip(why, checks...) }

// add appends a row: it fails when fail is non-empty.
func (r *report) add(check, fail, pass string) {
	if fail != "" {
		r.r = append(r.r, Result{Check: check, Detail: fail})
		return
	}
	r.r = append(r.r, Result{Check: check, OK: true, Detail: pass})
}

// CheckFile loads the module at path and runs it through the kit. The
// error is for a run that could not start (no host); everything about the
// plugin, including a module that does not load, is a row of the Report.
func CheckFile(ctx context.Context, path string, o Options) (Report, error) {
	h := o.Host
	if h == nil {
		cfg := plugin.DefaultConfig()
		cfg.CheckOutput = true
		var err error
		if h, err = plugin.New(ctx, cfg); err != nil {
			return nil, err
		}
		defer h.Close(context.Background())
	}
	var r report
	m, err := h.LoadFile(ctx, path)
	if err != nil {
		var le *plugin.LoadError
		if errors.As(err, &le) {
			r.add("marker and exports", strings.Join(le.Problems, "; "), "")
		} else {
			r.add("marker and exports", err.Error(), "")
		}
		return r.r, nil
	}
	return check(ctx, m, o, r), nil
}

// Check runs a loaded module through the kit.
func Check(ctx context.Context, m *plugin.Module, o Options) Report {
	return check(ctx, m, o, report{})
}

func check(ctx context.Context, m *plugin.Module, o Options, r report) Report {
	info := m.Info()
	r.add("marker and exports", "", fmt.Sprintf("ABI v%d, %d exports, %d imports, memory min %d pages", info.ABIVersion, len(info.Exports), len(info.Imports), info.Memory.Min))
	info, err := m.Inspect(ctx)
	if err != nil {
		r.add("describe", err.Error(), "")
		return r.r
	}
	kind := info.Kind
	switch {
	case o.Kind != "" && !KnownKind(o.Kind):
		r.add("describe", fmt.Sprintf("unknown kind %q asked for", o.Kind), "")
		return r.r
	case o.Kind != "" && info.KindFrom == abi.ExportDescribe && info.Kind != o.Kind:
		r.add("describe", fmt.Sprintf("describe reports kind %q, expected %q", info.Kind, o.Kind), "")
		return r.r
	case o.Kind != "":
		kind = o.Kind
	}
	if !KnownKind(kind) {
		r.add("describe", fmt.Sprintf("unknown kind %q", kind), "")
		return r.r
	}
	detail := fmt.Sprintf("kind %s (from %s)", kind, info.KindFrom)
	if info.SDK != "" {
		detail += ", sdk " + info.SDK
	}
	r.add("describe", "", detail)
	if o.Records <= 0 {
		o.Records = LargeBatch
	}
	switch kind {
	case abi.KindPartitioner:
		checkPartitioner(ctx, m, o, &r)
	case abi.KindKeySelector:
		checkKeySelector(ctx, m, o, &r)
	default:
		// keyed state is there for a plugin that says it keeps it, or says
		// nothing (no sluice_describe)
		keyed := info.Keyed || info.KindFrom != abi.ExportDescribe
		checkOperator(ctx, m, kind, info.Outputs, keyed, o, &r)
	}
	return r.r
}

// ---- input ------------------------------------------------------------------

var (
	accounts   = []string{"acct-01", "acct-04", "acct-17", "acct-23", "acct-42", "acct-99", "acct-ü", "acct-日本"}
	currencies = []string{"EUR", "USD", "GBP", "JPY"}
	countries  = []string{"NL", "DE", "FR", "US", "GB", "JP", "BR"}
	words      = []string{"the", "quick", "Brown", "fox", "jumps,", "over", "lazy", "dogs!", "Ça", "va?", "straße", "naïve"}
)

// Records returns a batch of n transactions-like records, keyed by
// accountId, with the event time ts: {txnId, accountId, amount (an int,
// negative or zero for one in five, a float for one in seven), currency,
// country, ts, line (a few words), deviceId, value (a float)}, so that
// filters, maps and flat-maps have fields to read.
func Records(n int) ([]byte, int) {
	var w abi.Writer
	var v, k []byte
	for i := 0; i < n; i++ {
		acct := accounts[i%len(accounts)]
		ts := int64(1700000000000 + i*250)
		v = abi.AppendMapHeader(v[:0], 9)
		v = abi.AppendStr(v, "txnId")
		v = abi.AppendInt(v, int64(1000+i))
		v = abi.AppendStr(v, "accountId")
		v = abi.AppendStr(v, acct)
		v = abi.AppendStr(v, "amount")
		switch {
		case i%7 == 3:
			v = abi.AppendFloat(v, float64(i%300)+0.25)
		case i%5 == 1:
			v = abi.AppendInt(v, -int64(i%97))
		default:
			v = abi.AppendInt(v, int64((i*37)%5000))
		}
		v = abi.AppendStr(v, "currency")
		v = abi.AppendStr(v, currencies[i%len(currencies)])
		v = abi.AppendStr(v, "country")
		v = abi.AppendStr(v, countries[(i/3)%len(countries)])
		v = abi.AppendStr(v, "ts")
		v = abi.AppendInt(v, ts)
		v = abi.AppendStr(v, "line")
		var line strings.Builder
		for j := 0; j < 1+i%5; j++ {
			if j > 0 {
				line.WriteByte(' ')
			}
			line.WriteString(words[(i+j*5)%len(words)])
		}
		v = abi.AppendStr(v, line.String())
		v = abi.AppendStr(v, "deviceId")
		v = abi.AppendStr(v, "dev-"+strconv.Itoa(i%13))
		v = abi.AppendStr(v, "value")
		v = abi.AppendFloat(v, float64(i%60)-10+0.5)
		k = abi.AppendStr(k[:0], acct)
		w.Append(ts, true, k, v)
	}
	return w.Buf, w.Count
}

// malformed is a batch the guest must refuse with an error status.
type malformed struct {
	name  string
	batch []byte
	count int
}

func malformedBatches() []malformed {
	one, _ := Records(1)
	two, _ := Records(2)
	return []malformed{
		{"truncated batch", one[:len(one)/2], 1},
		{"count > records", two, 3},
		{"not an envelope", abi.AppendStr(abi.AppendStr(abi.AppendMapHeader(nil, 1), "amount"), "x"), 1},
	}
}

// refused checks that err is the malformed-input status returned by the
// guest, not a trap, a poisoned instance, success or another status (a
// plugin failing on its own before it notices the batch is malformed
// has not shown that it notices).
func refused(err error) (fail, pass string) {
	var pe *plugin.PluginError
	switch {
	case err == nil:
		return "accepted without an error", ""
	case !errors.As(err, &pe):
		return "failed outside the plugin: " + err.Error(), ""
	case pe.Poisoned || !errors.Is(err, plugin.ErrStatus) || pe.Status == abi.StatusOK:
		return "not an error status (trap or ABI break): " + err.Error(), ""
	case pe.Status != abi.StatusMalformed:
		return fmt.Sprintf("status %s, want %s (%d): %s", pe.Status, abi.StatusMalformed, int32(abi.StatusMalformed), err), ""
	}
	pass = "status " + pe.Status.String()
	if pe.Text != "" {
		pass += ": " + pe.Text
	}
	return "", pass
}

// badOutput reports whether err is the host refusing what the guest
// emitted.
func badOutput(err error) bool {
	return errors.Is(err, plugin.ErrMalformedOutput) || errors.Is(err, plugin.ErrABI) || errors.Is(err, plugin.ErrOutputLimit)
}

// ---- operators -----------------------------------------------------------------

// collector checks and keeps what an operator emits.
type collector struct {
	ports []string // port -> tag ("" for the main output)
	out   map[int]*abi.Writer
	bad   string // the first malformed emit
	total int
}

func newCollector(outputs []string) *collector {
	return &collector{ports: append([]string{""}, outputs...)}
}

func (c *collector) port(tag string) int {
	for i, p := range c.ports {
		if p == tag {
			return i
		}
	}
	c.ports = append(c.ports, tag)
	return len(c.ports) - 1
}

func (c *collector) Emit(port int, buf []byte, count int) error {
	if port < 0 || port >= len(c.ports) {
		if c.bad == "" {
			c.bad = fmt.Sprintf("emit to port %d of %d", port, len(c.ports))
		}
		return nil
	}
	rd := abi.NewReader(buf, count)
	n := 0
	for rd.Next() {
		n++
	}
	if err := rd.Err(); (err != nil || n != count) && c.bad == "" {
		c.bad = fmt.Sprintf("port %d: %d bytes do not hold %d envelopes (%d read, %v)", port, len(buf), count, n, err)
	}
	if c.out == nil {
		c.out = map[int]*abi.Writer{}
	}
	w := c.out[port]
	if w == nil {
		w = &abi.Writer{}
		c.out[port] = w
	}
	w.Buf = append(w.Buf, buf...)
	w.Count += count
	c.total += count
	return nil
}

// take returns what was emitted since the last take, as a comparable
// summary, and forgets it.
func (c *collector) take() (summary string, records int) {
	var b strings.Builder
	for p := 0; p < len(c.ports); p++ {
		if w := c.out[p]; w != nil {
			name := c.ports[p]
			if name == "" {
				name = "main"
			}
			fmt.Fprintf(&b, "%s %d records sha256 %x; ", name, w.Count, sha256.Sum256(w.Buf))
			records += w.Count
		}
	}
	c.out = nil
	return b.String(), records
}

// step is the outcome of one call of an operator run.
type step struct {
	err     error
	summary string
	records int
}

func (s step) String() string {
	if s.err != nil {
		var pe *plugin.PluginError
		if errors.As(s.err, &pe) {
			return fmt.Sprintf("error status %v text %q poisoned %v", pe.Status, pe.Text, pe.Poisoned)
		}
		return "error " + s.err.Error()
	}
	return s.summary
}

// opRun is one operator instance through the whole sequence.
type opRun struct {
	open      error
	empty     step
	large     step
	malformed []step
	after     step
	close     step
	bad       string
	emitErr   string
}

func runOperator(ctx context.Context, m *plugin.Module, kind abi.Kind, outputs []string, keyed bool, o Options, large []byte, count int) opRun {
	var run opRun
	c := newCollector(outputs)
	cfg := o.Config
	if cfg == nil {
		cfg = map[string]any{}
	}
	op := m.NewOperator(ctx, "conformance", cfg)
	oc := &runtime.OpenContext{
		Operator: "conformance", Parallelism: 1, MaxParallelism: 128, Config: cfg,
		KeyGroupStart: 0, KeyGroupEnd: 127, Port: c.port,
		Kind: pipeline.Kind(kind), // a map's output count is held to its input's, as in a job
	}
	if keyed {
		oc.State = plugin.NewMemoryState()
	}
	if run.open = op.Open(oc); run.open != nil {
		op.Close(nil)
		return run
	}
	inputs := []int{0}
	if kind == abi.KindCoMap || kind == abi.KindCoProcess {
		inputs = []int{0, 1}
	}
	call := func(batch []byte, n int) step {
		var s step
		for _, in := range inputs {
			if s.err = op.Process(in, batch, n, c); s.err != nil {
				break
			}
		}
		s.summary, s.records = c.take()
		if badOutput(s.err) && run.emitErr == "" {
			run.emitErr = s.err.Error()
		}
		return s
	}
	run.empty = call(nil, 0)
	run.large = call(large, count)
	for _, mb := range malformedBatches() {
		run.malformed = append(run.malformed, call(mb.batch, mb.count))
	}
	small, n := Records(16)
	small, n = windowed(kind, small, n)
	run.after = call(small, n)
	run.close.err = op.Close(c)
	run.close.summary, run.close.records = c.take()
	if badOutput(run.close.err) && run.emitErr == "" {
		run.emitErr = run.close.err.Error()
	}
	run.bad = c.bad
	return run
}

func (run opRun) transcript() string {
	var b strings.Builder
	fmt.Fprintf(&b, "empty: %v\nlarge: %v\n", run.empty, run.large)
	for i, s := range run.malformed {
		fmt.Fprintf(&b, "malformed %d: %v\n", i, s)
	}
	fmt.Fprintf(&b, "after: %v\nclose: %v\n", run.after, run.close)
	return b.String()
}

// windowed is a process-window's input: the batch after the header
// record of a window [0, 10000) of key "acct-01" (abi.AppendWindowHeader),
// as a firing window calls it; other kinds get the batch as it is.
func windowed(kind abi.Kind, batch []byte, n int) ([]byte, int) {
	if kind != abi.KindProcessWindow {
		return batch, n
	}
	return append(abi.AppendWindowHeader(nil, abi.AppendStr(nil, "acct-01"), 0, 10000), batch...), n + 1
}

func checkOperator(ctx context.Context, m *plugin.Module, kind abi.Kind, outputs []string, keyed bool, o Options, r *report) {
	large, count := Records(o.Records)
	large, count = windowed(kind, large, count)
	run := runOperator(ctx, m, kind, outputs, keyed, o, large, count)
	if run.open != nil {
		r.add(openLabel(o), run.open.Error(), "")
		r.skip("open failed", operatorChecks()...)
		return
	}
	if keyed {
		r.add(openLabel(o), "", "subtask 1/1, keyed state available")
	} else {
		r.add(openLabel(o), "", "subtask 1/1, no keyed state (its describe does not say keyed)")
	}
	// a plugin that uses keyed state without saying so runs in a pipeline
	// without a key-by, and fails there record by record
	undeclared := func(err error) string {
		var pe *plugin.PluginError
		if keyed || err == nil || !errors.Is(err, plugin.ErrState) && !(errors.As(err, &pe) && pe.Status == abi.StatusState) {
			return errText(err)
		}
		return err.Error() + "; the plugin uses keyed state but its describe does not say keyed (Go: sdk.KeyedProcess; Rust: const KEYED: bool = true; C: .keyed = true; AssemblyScript: .keyed())"
	}
	switch {
	case run.empty.err != nil:
		r.add("empty batch", run.empty.err.Error(), "")
	case run.empty.records != 0:
		r.add("empty batch", fmt.Sprintf("emitted %d records for a batch of 0", run.empty.records), "")
	default:
		r.add("empty batch", "", "0 records in, 0 out")
	}
	if run.large.err != nil {
		r.add("large batch", undeclared(run.large.err), "")
	} else {
		r.add("large batch", "", fmt.Sprintf("%d records (%d bytes) in, %d out", count, len(large), run.large.records))
	}
	for i, mb := range malformedBatches() {
		fail, pass := refused(run.malformed[i].err)
		if fail == "" && run.malformed[i].records != 0 {
			fail = fmt.Sprintf("output of a failed batch came out: %d records", run.malformed[i].records)
		}
		r.add(mb.name, fail, pass)
	}
	if run.after.err != nil {
		r.add("after malformed input", run.after.err.Error(), "")
	} else {
		r.add("after malformed input", "", fmt.Sprintf("16 records in, %d out", run.after.records))
	}
	r.add("emits within bounds", cmpOr(run.emitErr, run.bad), "every output parses as count envelopes")
	again := runOperator(ctx, m, kind, outputs, keyed, o, large, count)
	det := ""
	if again.open != nil {
		det = "second instance: open: " + again.open.Error()
	} else if a, b := run.transcript(), again.transcript(); a != b {
		det = "a fresh instance gave different results for the same input:\n" + diffLines(a, b)
	}
	r.add("deterministic", det, "a fresh instance, the same input: identical output")
	if run.close.err != nil {
		r.add("close", run.close.err.Error(), "")
	} else {
		r.add("close", "", fmt.Sprintf("%d records emitted at close", run.close.records))
	}
}

// The rows each kind's run gives after open, in order, for the skipped
// rows of a run whose open failed (the tests hold them to the runs).
func operatorChecks() []string {
	return slices.Concat([]string{"empty batch", "large batch"}, malformedNames(),
		[]string{"after malformed input", "emits within bounds", "deterministic", "close"})
}

func partitionerChecks() []string {
	return slices.Concat(partition.CustomChecks, []string{"transactions batch"}, malformedNames(),
		[]string{"after malformed input", "close"})
}

func keySelectorChecks() []string {
	return slices.Concat([]string{"empty batch", "large batch"}, malformedNames(), []string{"deterministic"})
}

func malformedNames() []string {
	var names []string
	for _, mb := range malformedBatches() {
		names = append(names, mb.name)
	}
	return names
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// diffLines shows the first line where a and b differ.
func diffLines(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := 0; i < len(al) && i < len(bl); i++ {
		if al[i] != bl[i] {
			return fmt.Sprintf("  first: %s\n  again: %s", al[i], bl[i])
		}
	}
	return fmt.Sprintf("  %d lines, then %d lines", len(al), len(bl))
}

// ---- partitioners and key selectors -----------------------------------------

func checkPartitioner(ctx context.Context, m *plugin.Module, o Options, r *report) {
	n := o.Channels
	if n <= 0 {
		n = 4
	}
	p, err := m.NewPartitioner(ctx, "up", "down", 0, 1, 128, o.Config)
	if err != nil {
		r.add(openLabel(o), err.Error(), "")
		r.skip("open failed", partitionerChecks()...)
		return
	}
	defer p.Close()
	// The partitioner opens on its first call: an empty one does not reach
	// the guest, so open with a real record.
	one, _ := Records(1)
	if err := p.Partition(one, 1, n, make([]int32, 1)); err != nil {
		r.add(openLabel(o), err.Error(), "")
		r.skip("open failed", partitionerChecks()...)
		return
	}
	r.add(openLabel(o), "", fmt.Sprintf("edge up->down, %d channels", n))
	for _, x := range partition.CheckCustom(p, nil, n) {
		r.r = append(r.r, x)
	}
	large, count := Records(o.Records)
	out := make([]int32, count)
	if err := p.Partition(large, count, n, out); err != nil {
		r.add("transactions batch", err.Error(), "")
	} else {
		bad := ""
		for i, c := range out {
			if c < 0 || int(c) >= n {
				bad = fmt.Sprintf("record %d to channel %d of %d", i, c, n)
				break
			}
		}
		r.add("transactions batch", bad, fmt.Sprintf("%d records in [0, %d)", count, n))
	}
	for _, mb := range malformedBatches() {
		fail, pass := refused(p.Partition(mb.batch, mb.count, n, make([]int32, mb.count)))
		r.add(mb.name, fail, pass)
	}
	if err := p.Partition(one, 1, n, make([]int32, 1)); err != nil {
		r.add("after malformed input", err.Error(), "")
	} else {
		r.add("after malformed input", "", "1 record partitioned")
	}
	if err := p.Close(); err != nil {
		r.add("close", err.Error(), "")
	} else {
		r.add("close", "", "released")
	}
}

func checkKeySelector(ctx context.Context, m *plugin.Module, o Options, r *report) {
	large, count := Records(o.Records)
	run := func() (keys []byte, open, empty, big error, mal []error) {
		k, err := m.NewKeySelector(ctx, "up", "down", 0, 1, 128, o.Config)
		if err != nil {
			return nil, err, nil, nil, nil
		}
		defer k.Close()
		// It opens on its first call, which an empty batch does not make:
		// open with a real record (the open row passed when open failed).
		one, _ := Records(1)
		if _, err := k.Keys(one, 1, nil); err != nil {
			return nil, err, nil, nil, nil
		}
		var got []byte
		got, empty = k.Keys(nil, 0, nil)
		if empty == nil && len(got) != 0 {
			empty = fmt.Errorf("%d bytes of keys for 0 records", len(got))
		}
		keys, big = k.Keys(large, count, nil)
		if big == nil {
			off := 0
			for i := 0; i < count && big == nil; i++ {
				if off, err = abi.Skip(keys, off); err != nil {
					big = fmt.Errorf("key %d: %v", i, err)
				}
			}
			if big == nil && off != len(keys) {
				big = fmt.Errorf("%d bytes past %d keys", len(keys)-off, count)
			}
		}
		for _, mb := range malformedBatches() {
			_, err := k.Keys(mb.batch, mb.count, nil)
			mal = append(mal, err)
		}
		return keys, nil, empty, big, mal
	}
	keys, open, empty, big, mal := run()
	if open != nil {
		r.add(openLabel(o), open.Error(), "")
		r.skip("open failed", keySelectorChecks()...)
		return
	}
	r.add(openLabel(o), "", "edge up->down")
	r.add("empty batch", errText(empty), "0 records, 0 keys")
	r.add("large batch", errText(big), fmt.Sprintf("%d records, %d key bytes", count, len(keys)))
	for i, mb := range malformedBatches() {
		fail, pass := refused(mal[i])
		r.add(mb.name, fail, pass)
	}
	again, _, _, err, _ := run()
	det := errText(err)
	if det == "" && !bytes.Equal(keys, again) {
		det = "a fresh instance gave different keys for the same records"
	}
	r.add("deterministic", det, "a fresh instance, the same keys")
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// openLabel names the open check by the config it opened with.
func openLabel(o Options) string {
	if len(o.Config) == 0 {
		return "open (empty config)"
	}
	return "open (the given config)"
}
