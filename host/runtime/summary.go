package runtime

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// WriteSummary prints the end-of-run summary: per operator the records in
// and out, the rate, the skew (busiest subtask's records against the mean,
// 1.00 is even) and the back-pressured time of the operator's busiest
// subtask with its share of the job's time (summed over subtasks it could
// exceed the job's time), then the connectors' own gauges (a Kafka
// source's records-lag per partition), then a warning for every hot key
// of a HASH edge.
func (r *Result) WriteSummary(w io.Writer) error {
	secs := r.Duration.Seconds()
	rows := [][]string{{"operator", "kind", "par", "records in", "records out", "records/s", "skew", "back-pressured (max subtask)"}}
	for _, m := range r.Operators {
		n := m.RecordsIn
		if n == 0 {
			n = m.RecordsOut
		}
		rate := "-"
		if secs > 0 {
			rate = group(int64(float64(n) / secs))
		}
		skew := "-"
		if m.Skew > 0 {
			skew = strconv.FormatFloat(m.Skew, 'f', 2, 64)
		}
		rows = append(rows, []string{m.ID, m.Kind, strconv.Itoa(m.Parallelism), group(m.RecordsIn), group(m.RecordsOut),
			rate, skew, backPressured(m.MaxBackPressuredMs, r.Duration)})
	}
	width := make([]int, len(rows[0]))
	for _, row := range rows {
		for i, c := range row {
			width[i] = max(width[i], len(c))
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "job %q (%s): %s\n", r.Job, r.Mode, r.Duration.Round(100*time.Microsecond))
	for _, row := range rows {
		for i, c := range row {
			pad := strings.Repeat(" ", width[i]-len(c))
			switch {
			case i < 2: // names: left-aligned
				b.WriteString(c + pad + "  ")
			case i == len(row)-1:
				b.WriteString(pad + c)
			default:
				b.WriteString(pad + c + "  ")
			}
		}
		b.WriteByte('\n')
	}
	for _, m := range r.Operators {
		if line := errorLine(m); line != "" {
			fmt.Fprintf(&b, "operator %q: %s\n", m.ID, line)
		}
	}
	for _, m := range r.Operators {
		for _, line := range gaugeLines(m) {
			b.WriteString(line + "\n")
		}
	}
	for _, h := range r.HotKeys {
		where := ""
		if h.Subtask >= 0 {
			if m := r.Operator(h.To); m != nil {
				where = fmt.Sprintf(": subtask %d/%d of %q processes all of them", h.Subtask+1, m.Parallelism, h.To)
			}
		}
		fmt.Fprintf(&b, "warning: hot key %s carries %.0f%% of the records on the %s edge %s -> %s%s; %s\n",
			h.Key, 100*h.Share, h.Strategy, h.From, h.To, where, h.Advice)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// backPressured is a subtask's back-pressured time and its share of the
// job's time d: "6,203ms (78%)", "0ms".
func backPressured(ms int64, d time.Duration) string {
	s := group(ms) + "ms"
	if ms > 0 && d > 0 {
		s += fmt.Sprintf(" (%.0f%%)", min(100, 100*float64(ms)/float64(d.Milliseconds())))
	}
	return s
}

// group writes n with thousands separators.
func group(n int64) string {
	s := strconv.FormatInt(n, 10)
	if n < 0 {
		return s
	}
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// errorLine lists what an operator's error policy and sandbox did, e.g.
// "3 records skipped, 1 plugin restart"; "" when nothing happened.
func errorLine(m OperatorMetrics) string {
	var parts []string
	add := func(n int64, one, many string) {
		switch {
		case n == 1:
			parts = append(parts, "1 "+one)
		case n > 1:
			parts = append(parts, group(n)+" "+many)
		}
	}
	add(m.Skipped, "record skipped", "records skipped")
	add(m.DeadLettered, "record dead-lettered", "records dead-lettered")
	add(m.Restarts, "plugin restart", "plugin restarts")
	add(m.LogLinesDropped, "guest log line dropped", "guest log lines dropped")
	return strings.Join(parts, ", ")
}
