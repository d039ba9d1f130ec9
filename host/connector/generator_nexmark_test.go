package connector

import (
	"testing"

	"github.com/sluicehq/sluice/abi"
)

// The bids follow the reference generator's draws: half go to a hot
// auction (a multiple of 100 above the first id), 3 in 4 come from a
// hot bidder (a multiple of 100 plus 1), auctions stay within the 100 in
// flight plus the lead of 10 of the last auction, prices span 1 $ to
// 1 000 000 $ in cents.
func TestNexmarkBids(t *testing.T) {
	const n = 46 * 2000
	c, _ := runSource(t, &Builtin{}, genSpec(map[string]any{"preset": "bids", "count": n, "seed": 1}), 0, 1)
	hotA, hotB := 0, 0
	minP, maxP := int64(1<<62), int64(0)
	for i, r := range c.records {
		get := func(f string) int64 {
			raw, _, _ := abi.MapField(r.value, f)
			v, err := abi.ReadInt(raw)
			if err != nil {
				t.Fatalf("bid %d: %s: %v", i, f, err)
			}
			return v
		}
		a, b, p := get("auction")-nexFirstAuction, get("bidder")-nexFirstPerson, get("price")
		e := uint64(i/46*50 + 4 + i%46)
		last := int64(nexLastAuction(e))
		if last%100 != 0 && a%100 == 0 && a == last/100*100 {
			hotA++
		}
		if a > last+nexAuctionLead || a < last-nexInFlight-1 && a != last/100*100 {
			t.Fatalf("bid %d: auction %d, the last being %d", i, a, last)
		}
		if b%100 == 1 && b == int64(nexLastPerson(e))/100*100+1 {
			hotB++
		}
		minP, maxP = min(minP, p), max(maxP, p)
	}
	if share := float64(hotA) / n; share < 0.45 || share > 0.55 {
		t.Errorf("hot auctions: %.3f of the bids, want about 0.5", share)
	}
	if share := float64(hotB) / n; share < 0.70 || share > 0.80 {
		t.Errorf("hot bidders: %.3f of the bids, want about 0.75", share)
	}
	if minP < 100 || minP > 200 || maxP > 100_000_000 || maxP < 50_000_000 {
		t.Errorf("prices in [%d, %d] cents", minP, maxP)
	}
}

// nexLastAuction counts the auctions of the event stream before event e
// (persons, auctions, bids in proportions 1 : 3 : 46 of 50).
func TestNexmarkLastAuction(t *testing.T) {
	for _, c := range [][2]uint64{{0, 0}, {1, 0}, {2, 1}, {3, 2}, {4, 2}, {49, 2}, {50, 2}, {51, 3}, {104, 8}, {150, 8}} {
		if got := nexLastAuction(c[0]); got != c[1] {
			t.Errorf("event %d: last auction %d, want %d", c[0], got, c[1])
		}
	}
}
