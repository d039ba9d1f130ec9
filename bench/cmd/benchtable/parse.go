package main

import (
	"bufio"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// Result is one benchmark's line of `go test -bench` output.
type Result struct {
	Pkg     string               // package path relative to the module root, e.g. "host/runtime"
	Name    string               // e.g. "BenchmarkEdge/fused", without the -GOMAXPROCS suffix
	N       int64                // iterations of the last run
	Metrics map[string]float64   // unit -> the median over Runs: "ns/op", "B/op", "allocs/op", "MB/s", custom units
	Runs    []map[string]float64 // each run's figures, in the order they were printed (go test -count=N)
}

// Key is how rows refer to a result: "pkg.BenchmarkName/sub".
func (r *Result) Key() string { return r.Pkg + "." + r.Name }

// Results is everything parsed from one or more outputs.
type Results struct {
	ByKey map[string]*Result
	Order []*Result
	Skips map[string]string // "pkg.Name" -> reason, from "--- SKIP:" lines
	Fails map[string]string // "pkg.Name" -> first line of the reason
	// PkgFails: packages whose run failed or was skipped as a whole
	// ("FAIL\tpkg [build failed]", or the driver's "SKIP\tpkg\treason").
	PkgFails map[string]string
}

func newResults() *Results {
	return &Results{ByKey: map[string]*Result{}, Skips: map[string]string{}, Fails: map[string]string{}, PkgFails: map[string]string{}}
}

// Get returns the value of unit of the benchmark key, if it was measured.
func (rs *Results) Get(key, unit string) (float64, bool) {
	r := rs.ByKey[key]
	if r == nil {
		return 0, false
	}
	v, ok := r.Metrics[unit]
	return v, ok
}

// Why says why key has no figure: skipped, failed or not run.
func (rs *Results) Why(key string) string {
	for k, reason := range rs.Skips {
		if k == key || strings.HasPrefix(key, k+"/") {
			return "skipped: " + reason
		}
	}
	for k, reason := range rs.Fails {
		if k == key || strings.HasPrefix(key, k+"/") {
			return "failed: " + reason
		}
	}
	if i := strings.Index(key, ".Benchmark"); i >= 0 {
		if reason, ok := rs.PkgFails[key[:i]]; ok {
			return reason
		}
	}
	return "not measured"
}

var (
	// BenchmarkName-8   	 1000	 1234 ns/op	 12 B/op ...
	benchLine = regexp.MustCompile(`^(Benchmark\S+?)(?:-\d+)?\s+(\d+)\s+(\S.*)$`)
	// --- SKIP: BenchmarkX/sub   and --- FAIL: BenchmarkX-2 (a test's has "(0.00s)")
	statusLine = regexp.MustCompile(`^\s*--- (SKIP|FAIL): (Benchmark\S+?)(?:-\d+)?\s*(?:\(.*)?$`)
)

// Parse reads `go test -bench` output. modulePrefix is stripped from the
// "pkg:" lines (e.g. "github.com/sluicehq/sluice/"); results are added to
// rs. Lines that are not benchmark results are ignored, except the
// status lines of skipped and failed benchmarks, whose reason (the next
// indented line) is kept.
func Parse(r io.Reader, modulePrefix string, rs *Results) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	pkg := ""
	pending := "" // key of a SKIP/FAIL waiting for its reason
	pendingKind := ""
	for sc.Scan() {
		line := sc.Text()
		if pending != "" {
			reason := strings.TrimSpace(line)
			// the reason is printed as "    file_test.go:12: text"
			if i := strings.Index(reason, ": "); i > 0 && strings.Contains(reason[:i], ".go:") {
				reason = reason[i+2:]
			}
			if pendingKind == "SKIP" {
				rs.Skips[pending] = reason
			} else {
				rs.Fails[pending] = reason
			}
			pending = ""
		}
		if f := strings.SplitN(line, "\t", 3); len(f) >= 2 && (f[0] == "FAIL" || f[0] == "SKIP") && !strings.HasPrefix(f[1], " ") {
			p := strings.TrimPrefix(strings.Fields(f[1])[0], modulePrefix)
			reason := "the package's run failed"
			if strings.Contains(line, "[build failed]") {
				reason = "the package did not build"
			} else if f[0] == "SKIP" && len(f) == 3 {
				reason = f[2]
			}
			rs.PkgFails[p] = reason
			continue
		}
		if p, ok := strings.CutPrefix(line, "pkg: "); ok {
			pkg = strings.TrimPrefix(strings.TrimSpace(p), modulePrefix)
			continue
		}
		if m := statusLine.FindStringSubmatch(line); m != nil {
			pending, pendingKind = pkg+"."+m[2], m[1]
			if m[1] == "SKIP" {
				rs.Skips[pending] = ""
			} else {
				rs.Fails[pending] = ""
			}
			continue
		}
		m := benchLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		n, err := strconv.ParseInt(m[2], 10, 64)
		if err != nil {
			continue
		}
		fields := strings.Fields(m[3])
		if len(fields)%2 != 0 {
			continue // not a result line (e.g. a log line starting with a name)
		}
		res := &Result{Pkg: pkg, Name: m[1], N: n, Metrics: map[string]float64{}}
		ok := true
		for i := 0; i < len(fields); i += 2 {
			v, err := strconv.ParseFloat(fields[i], 64)
			if err != nil {
				ok = false
				break
			}
			res.Metrics[fields[i+1]] = v
		}
		if !ok {
			continue
		}
		res.Runs = []map[string]float64{res.Metrics}
		if old := rs.ByKey[res.Key()]; old != nil {
			// another run of the same benchmark (-count=N): a sample more,
			// the figure is the median; the order stays the first run's
			old.N = res.N
			old.Runs = append(old.Runs, res.Metrics)
			old.Metrics = medians(old.Runs)
			continue
		}
		rs.ByKey[res.Key()] = res
		rs.Order = append(rs.Order, res)
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("reading benchmark output: %w", err)
	}
	return nil
}

// medians is, for every unit, the median of its values over runs (the
// mean of the middle two for an even number); a unit some runs lack is
// the median of those that have it.
func medians(runs []map[string]float64) map[string]float64 {
	vals := map[string][]float64{}
	for _, r := range runs {
		for u, v := range r {
			vals[u] = append(vals[u], v)
		}
	}
	m := make(map[string]float64, len(vals))
	for u, v := range vals {
		sort.Float64s(v)
		if n := len(v); n%2 == 1 {
			m[u] = v[n/2]
		} else {
			m[u] = (v[n/2-1] + v[n/2]) / 2
		}
	}
	return m
}
