package watermark

// Combined combines the watermarks and statuses of a two-input operator's
// inputs, each the output of its own Valve over that input's channels, as
// Flink's AbstractStreamOperator does with its IndexedCombinedWatermarkStatus
// (processWatermark1/2, processWatermarkStatus1/2): the operator's watermark
// is the minimum over the inputs that are not idle, emitted when it rises;
// an input's watermark counts again as soon as the input is active (it is
// not re-aligned, unlike a channel in a Valve); the operator is idle when
// every input is, and says so when that changes. An input's watermark is
// kept while it is idle, and a watermark clears its idleness.
type Combined struct {
	in   []partial
	wm   int64
	idle bool
}

type partial struct {
	wm   int64
	idle bool
}

// NewCombined returns the combination of n inputs, all active at Min.
func NewCombined(n int) *Combined {
	c := &Combined{in: make([]partial, n), wm: Min}
	for i := range c.in {
		c.in[i].wm = Min
	}
	return c
}

// Watermark is the last watermark the combination emitted (Min before one).
func (c *Combined) Watermark() int64 { return c.wm }

// InputWatermark feeds watermark wm of input i (updateWatermark; no status
// is emitted for it, as in Flink's processWatermark(mark, index)).
func (c *Combined) InputWatermark(wm int64, i int) Output {
	p := &c.in[i]
	p.idle = false
	p.wm = max(p.wm, wm)
	return c.update()
}

// InputStatus feeds input i's status (updateStatus): a watermark when the
// minimum rose, then Idle or Active when the operator's idleness changed.
func (c *Combined) InputStatus(idle bool, i int) Output {
	was := c.idle
	c.in[i].idle = idle
	out := c.update()
	if c.idle != was {
		out.Idle, out.Active = c.idle, !c.idle
	}
	return out
}

// update is CombinedWatermarkStatus.updateCombinedWatermark.
func (c *Combined) update() Output {
	if len(c.in) == 0 {
		return Output{}
	}
	all, m := true, Max
	for _, p := range c.in {
		if !p.idle {
			all = false
			m = min(m, p.wm)
		}
	}
	c.idle = all
	if !all && m > c.wm {
		c.wm = m
		return Output{Watermark: m, HasWatermark: true}
	}
	return Output{}
}
