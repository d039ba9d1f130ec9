package watermark

// Valve combines the watermarks and statuses of a task's input channels
// into the task's input watermark, as Flink's StatusWatermarkValve: the
// minimum over the aligned active channels, never going backwards; a
// channel that goes idle stops holding it back; when every channel is
// idle the maximum over all of them is flushed, then IDLE; a channel that
// becomes active again counts only once its watermark caught up with the
// last output (it is re-aligned). Channels are few and watermarks rare
// next to records, so the minimum is a scan rather than Flink's heap: the
// same outputs.
type Valve struct {
	ch         []channelStatus
	lastOutput int64
	idle       bool // lastOutputWatermarkStatus is IDLE
}

type channelStatus struct {
	watermark int64
	idle      bool
	aligned   bool
}

// Output is what one input to the valve made it emit, in this order: a
// watermark (HasWatermark), then a status change (Idle or Active).
type Output struct {
	Watermark    int64
	HasWatermark bool
	Idle, Active bool
}

// NewValve returns the valve of n channels, all active and aligned at Min.
func NewValve(n int) *Valve {
	v := &Valve{ch: make([]channelStatus, n), lastOutput: Min}
	for i := range v.ch {
		v.ch[i] = channelStatus{watermark: Min, aligned: true}
	}
	return v
}

// Watermark is the last watermark the valve emitted (Min before one).
func (v *Valve) Watermark() int64 { return v.lastOutput }

// Idle reports whether every channel is idle.
func (v *Valve) Idle() bool { return v.idle }

// ChannelWatermark is channel c's last watermark; Aligned whether it
// counts for the minimum.
func (v *Valve) ChannelWatermark(c int) int64 { return v.ch[c].watermark }

// Aligned reports whether channel c counts for the minimum.
func (v *Valve) Aligned(c int) bool { return v.ch[c].aligned }

// InputWatermark feeds watermark wm of channel c.
func (v *Valve) InputWatermark(wm int64, c int) Output {
	s := &v.ch[c]
	if v.idle || s.idle || wm <= s.watermark {
		return Output{}
	}
	s.watermark = wm
	if !s.aligned && wm >= v.lastOutput {
		s.aligned = true
	}
	return v.newMin()
}

// InputStatus feeds channel c's status (idle true for IDLE).
func (v *Valve) InputStatus(idle bool, c int) Output {
	s := &v.ch[c]
	var out Output
	switch {
	case idle && !s.idle:
		s.idle, s.aligned = true, false
		if !v.anyActive() {
			if s.watermark == v.lastOutput {
				out = v.maxAll()
			}
			v.idle = true
			out.Idle = true
		} else if s.watermark == v.lastOutput {
			out = v.newMin()
		}
	case !idle && s.idle:
		s.idle = false
		if s.watermark >= v.lastOutput {
			s.aligned = true
		}
		if v.idle {
			v.idle = false
			out.Active = true
		}
	}
	return out
}

func (v *Valve) anyActive() bool {
	for i := range v.ch {
		if !v.ch[i].idle {
			return true
		}
	}
	return false
}

// newMin emits the minimum over the aligned channels when it rose.
func (v *Valve) newMin() Output {
	found, m := false, Max
	for i := range v.ch {
		if s := &v.ch[i]; s.aligned && (!found || s.watermark < m) {
			found, m = true, s.watermark
		}
	}
	if found && m > v.lastOutput {
		v.lastOutput = m
		return Output{Watermark: m, HasWatermark: true}
	}
	return Output{}
}

// maxAll emits the maximum over every channel when it is above the last
// output (findAndOutputMaxWatermarkAcrossAllSubpartitions).
func (v *Valve) maxAll() Output {
	m := Min
	for i := range v.ch {
		m = max(m, v.ch[i].watermark)
	}
	if m > v.lastOutput {
		v.lastOutput = m
		return Output{Watermark: m, HasWatermark: true}
	}
	return Output{}
}
