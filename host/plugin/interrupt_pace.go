package plugin

import "github.com/sluicehq/sluice/host/sched"

// FuelPacer is a FuelRate that several Hosts share (Config.FuelPacer):
// their guests together spend at most its rate (package sched's Pacer).
type FuelPacer struct{ p *sched.Pacer }

// NewFuelPacer returns a pacer of rate fuel units per second, or nil (no
// cap) when rate is 0 or less.
func NewFuelPacer(rate int64) *FuelPacer {
	if rate <= 0 {
		return nil
	}
	return &FuelPacer{p: sched.NewPacer(rate)}
}
