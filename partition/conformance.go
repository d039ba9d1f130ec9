package partition

import (
	"fmt"
	"math"
	"strings"

	"github.com/sluicehq/sluice/abi"
)

// The conformance kit, in the manner of Go's testing/fstest.TestFS: it
// runs a partitioner through the rules of flink-semantics.md §1-§2 and
// returns a result table rather than failing a test, so that a Go test
// (see partitiontest) and a CLI can both use it.

// Result is one row of a conformance Report.
type Result struct {
	Check string // what was checked, e.g. "range"
	OK    bool
	// Skipped reports a check that did not run because one it depends on
	// failed (Detail says which); it is neither passed nor failed.
	Skipped bool
	Detail  string // the first failure, or what passed
}

// Report is the result table of a conformance run, one row per check.
type Report []Result

// OK reports whether every check passed.
func (r Report) OK() bool { return len(r.Failures()) == 0 }

// Failures returns the failed rows (not the skipped ones).
func (r Report) Failures() Report {
	var f Report
	for _, x := range r {
		if !x.OK && !x.Skipped {
			f = append(f, x)
		}
	}
	return f
}

// Skipped returns the rows of checks that did not run.
func (r Report) Skipped() Report {
	var s Report
	for _, x := range r {
		if x.Skipped {
			s = append(s, x)
		}
	}
	return s
}

// String formats the table, one "PASS|FAIL|SKIP  check  detail" line per
// row.
func (r Report) String() string {
	var b strings.Builder
	for _, x := range r {
		status := "PASS"
		switch {
		case x.Skipped:
			status = "SKIP"
		case !x.OK:
			status = "FAIL"
		}
		fmt.Fprintf(&b, "%s  %-22s %s\n", status, x.Check, x.Detail)
	}
	return b.String()
}

// Skip appends a skipped row for each of checks: "not run: " + why.
func (r *Report) Skip(why string, checks ...string) {
	for _, c := range checks {
		*r = append(*r, Result{Check: c, Skipped: true, Detail: "not run: " + why})
	}
}

// add appends a row: it fails when fail is non-empty.
func (r *Report) add(check, fail, pass string) {
	if fail != "" {
		*r = append(*r, Result{Check: check, Detail: fail})
		return
	}
	*r = append(*r, Result{Check: check, OK: true, Detail: pass})
}

// SampleKeyHashes returns n key hashes for a conformance run: the edge
// values 0, 1, -1, MinInt32, MaxInt32 first, then the abi.KeyHash of
// SampleKeys.
func SampleKeyHashes(n int) []int32 {
	hs := []int32{0, 1, -1, math.MinInt32, math.MaxInt32}
	if n < len(hs) {
		return hs[:max(n, 0)]
	}
	for _, k := range SampleKeys(n - len(hs)) {
		h, _ := abi.KeyHash(k)
		hs = append(hs, h)
	}
	return hs
}

// CheckPartitioner runs built-in strategy name (not CUSTOM: see
// CheckCustom) for every upstream subtask of cfg (cfg.Upstream is
// ignored), one record per key hash (SampleKeyHashes(10000) when
// keyHashes is empty), and checks: New accepts cfg; Name; every channel in
// [0, n); two partitioners built from the same cfg agree; the strategy's
// rule (FORWARD i→i, HASH the key-group rule, REBALANCE and RESCALE round
// robin, SHUFFLE near-uniform, GLOBAL 0, BROADCAST to all); and, for the
// strategies that promise it, that every downstream channel is reached.
func CheckPartitioner(name string, cfg Config, keyHashes []int32) Report {
	name = strings.ToUpper(name)
	if len(keyHashes) == 0 {
		keyHashes = SampleKeyHashes(10000)
	}
	var r Report
	rule, ok := rules[name]
	if !ok {
		r.add("new", fmt.Sprintf("no conformance rule for strategy %q", name), "")
		return r
	}
	s, t := cfg.UpstreamParallelism, cfg.DownstreamParallelism
	cfg.Upstream = 0
	if _, err := New(name, cfg); err != nil {
		r.add("new", err.Error(), "")
		return r
	}
	r.add("new", "", fmt.Sprintf("%d upstream, %d downstream subtasks", s, t))
	fails := map[string]string{}
	fail := func(check string, format string, args ...any) {
		if fails[check] == "" {
			fails[check] = fmt.Sprintf(format, args...)
		}
	}
	reached := make([]bool, t)
	chans := make([]int, len(keyHashes))
	for i := 0; i < s; i++ {
		cfg.Upstream = i
		p, err := New(name, cfg)
		if err != nil {
			r.add("new", err.Error(), "")
			return r
		}
		q, _ := New(name, cfg)
		if p.Name() != name {
			fail("name", "upstream %d: Name() = %q", i, p.Name())
		}
		if IsBroadcast(p) {
			if b := p.(*Broadcast); b.N() != t {
				fail("rule", "upstream %d: broadcast to %d channels, want %d", i, b.N(), t)
			}
			continue
		}
		for k, h := range keyHashes {
			ch := p.Channel(h)
			chans[k] = ch
			if ch < 0 || ch >= t {
				fail("range", "upstream %d, record %d: channel %d not in [0, %d)", i, k, ch, t)
				continue
			}
			reached[ch] = true
			if c2 := q.Channel(h); c2 != ch {
				fail("deterministic", "upstream %d, record %d: channel %d, then %d from a second partitioner with the same config", i, k, ch, c2)
			}
		}
		if fails["range"] == "" {
			if msg := rule(cfg, keyHashes, chans); msg != "" {
				fail("rule", "upstream %d: %s", i, msg)
			}
		}
	}
	pass := fmt.Sprintf("%d upstream x %d records", s, len(keyHashes))
	r.add("name", fails["name"], name)
	r.add("range", fails["range"], fmt.Sprintf("%s in [0, %d)", pass, t))
	r.add("deterministic", fails["deterministic"], pass)
	r.add("rule", fails["rule"], ruleText[name])
	if need := covers[name]; need > 0 && len(keyHashes) >= need*t {
		miss := ""
		for ch, ok := range reached {
			if !ok {
				miss = fmt.Sprintf("downstream channel %d receives no record", ch)
				break
			}
		}
		r.add("coverage", miss, fmt.Sprintf("all %d channels reached", t))
	}
	return r
}

var ruleText = map[string]string{
	NameForward:   "upstream i feeds channel i",
	NameHash:      "channel = keyGroup*n/maxP, keyGroup in the channel's range",
	NameRebalance: "round robin over all channels, counts differ by at most 1",
	NameRescale:   "round robin over the pointwise subset from its first channel",
	NameShuffle:   "chi-square within bound",
	NameGlobal:    "every record to channel 0",
	NameBroadcast: "every record to all channels",
}

// covers: strategies that reach every downstream channel when each
// upstream subtask sends at least covers[name]*n records (SHUFFLE misses a
// channel with probability below n*e^-32).
var covers = map[string]int{NameForward: 1, NameRescale: 1, NameRebalance: 1, NameShuffle: 32}

// rules check one upstream subtask's channels; "" means conforming.
var rules = map[string]func(cfg Config, hs []int32, ch []int) string{
	NameForward: func(cfg Config, _ []int32, ch []int) string {
		for k, c := range ch {
			if c != cfg.Upstream {
				return fmt.Sprintf("record %d to channel %d, want %d", k, c, cfg.Upstream)
			}
		}
		return ""
	},
	NameHash: func(cfg Config, hs []int32, ch []int) string {
		n, maxP := cfg.DownstreamParallelism, cfg.MaxParallelism
		if maxP == 0 {
			maxP = DefaultMaxParallelism(n)
		}
		for k, c := range ch {
			kg := KeyGroup(hs[k], maxP)
			start, end := KeyGroupRange(maxP, n, c)
			if want := OperatorIndexForKeyGroup(maxP, n, kg); c != want || kg < start || kg > end {
				return fmt.Sprintf("record %d (key hash %d, key group %d) to channel %d owning [%d, %d], want %d", k, hs[k], kg, c, start, end, want)
			}
		}
		return ""
	},
	NameRebalance: func(cfg Config, _ []int32, ch []int) string {
		n := cfg.DownstreamParallelism
		for k := 1; k < len(ch); k++ {
			if ch[k] != (ch[k-1]+1)%n {
				return fmt.Sprintf("record %d to channel %d after %d, want %d", k, ch[k], ch[k-1], (ch[k-1]+1)%n)
			}
		}
		return balanced(ch, 0, n)
	},
	NameRescale: func(cfg Config, _ []int32, ch []int) string {
		first, end := PointwiseTargets(cfg.Upstream, cfg.UpstreamParallelism, cfg.DownstreamParallelism)
		for k, c := range ch {
			if want := first + k%(end-first); c != want {
				return fmt.Sprintf("record %d to channel %d, want %d (subset [%d, %d))", k, c, want, first, end)
			}
		}
		return balanced(ch, first, end)
	},
	NameShuffle: func(cfg Config, _ []int32, ch []int) string {
		n := cfg.DownstreamParallelism
		if n == 1 || len(ch) < 5*n {
			return ""
		}
		counts := make([]float64, n)
		for _, c := range ch {
			counts[c]++
		}
		mean := float64(len(ch)) / float64(n)
		var chi2 float64
		for _, c := range counts {
			chi2 += (c - mean) * (c - mean) / mean
		}
		df := float64(n - 1)
		if bound := df + 8*math.Sqrt(2*df); chi2 > bound {
			return fmt.Sprintf("chi-square %.1f over %d channels exceeds %.1f: not uniform", chi2, n, bound)
		}
		return ""
	},
	NameGlobal: func(_ Config, _ []int32, ch []int) string {
		for k, c := range ch {
			if c != 0 {
				return fmt.Sprintf("record %d to channel %d, want 0", k, c)
			}
		}
		return ""
	},
	NameBroadcast: func(Config, []int32, []int) string { return "" },
}

// balanced checks that the channels in [first, end) received counts that
// differ by at most one.
func balanced(ch []int, first, end int) string {
	counts := make([]int, end-first)
	for _, c := range ch {
		counts[c-first]++
	}
	lo, hi := len(ch), 0
	for _, c := range counts {
		lo, hi = min(lo, c), max(hi, c)
	}
	if hi-lo > 1 {
		return fmt.Sprintf("channel counts from %d to %d, want a spread of at most 1", lo, hi)
	}
	return ""
}
