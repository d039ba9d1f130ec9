package connector

import (
	"math"

	"github.com/sluicehq/sluice/abi"
)

// Nexmark's auctions and bids (the benchmark's event model, as its
// reference generator in Apache Beam, org.apache.beam.sdk.nexmark
// .sources.generator, makes them), for the Nexmark queries (q5, q7:
// configs/nexmark-*.yaml). The reference generator interleaves persons,
// auctions and bids in proportions 1 : 3 : 46 by event id; these presets
// give the auctions and the bids of that stream each as a source of its
// own: bid n is event (n / 46) * 50 + 4 + n % 46 of it, auction n event
// (n / 3) * 50 + 1 + n % 3. Ids and draws follow the reference's
// defaults: the first auction id 1000 and person id 1000, 100 auctions
// in flight, a bid's auction hot half the time (hot auction ratio 2,
// the auction id rounded down to a multiple of 100), its bidder hot 3 in
// 4 times (ratio 4), the price in cents 10^(6u) * 100 rounded, a hot
// channel (Google, Facebook, Baidu, Apple) half the time. Record n's
// event time is 2024-01-01T00:00:00Z plus n ms, as the other timed
// presets' (the reference spaces events by its rate instead).
const (
	presetBids     = "bids"
	presetAuctions = "auctions"

	nexFirstAuction  = 1000
	nexFirstPerson   = 1000
	nexInFlight      = 100 // numInFlightAuctions
	nexAuctionLead   = 10  // AUCTION_ID_LEAD
	nexHotRatio      = 100 // HOT_AUCTION_RATIO, HOT_BIDDER_RATIO, HOT_SELLER_RATIO
	nexActivePeople  = 1000
	nexProportionAll = 50
	nexCategories    = 5
)

var (
	keyAuction    = abi.AppendStr(nil, "auction")
	keyBidder     = abi.AppendStr(nil, "bidder")
	keyPrice      = abi.AppendStr(nil, "price")
	keyChannel    = abi.AppendStr(nil, "channel")
	keyID         = abi.AppendStr(nil, "id")
	keySeller     = abi.AppendStr(nil, "seller")
	keyCategory   = abi.AppendStr(nil, "category")
	keyInitialBid = abi.AppendStr(nil, "initialBid")
	keyReserve    = abi.AppendStr(nil, "reserve")
	keyExpires    = abi.AppendStr(nil, "expires")
	hotChannels   = [4][]byte{abi.AppendStr(nil, "Google"), abi.AppendStr(nil, "Facebook"), abi.AppendStr(nil, "Baidu"), abi.AppendStr(nil, "Apple")}
)

// nexPrice is PriceGenerator.nextPrice: round(10^(6u) * 100) cents.
func nexPrice(r uint64) int64 {
	u := float64(r>>11) / (1 << 53)
	return int64(math.Round(math.Pow(10, u*6) * 100))
}

// nexLastAuction is AuctionGenerator.lastBase0AuctionId of event e.
func nexLastAuction(e uint64) uint64 {
	epoch, off := e/nexProportionAll, e%nexProportionAll
	switch {
	case off < 1: // a person's slot: the previous epoch's last auction
		if epoch == 0 {
			return 0
		}
		return epoch*3 - 1
	case off < 4:
		return epoch*3 + off - 1
	}
	return epoch*3 + 2
}

// nexNextAuction is nextBase0AuctionId: one of the auctions in flight,
// or up to AUCTION_ID_LEAD ahead of the last.
func nexNextAuction(e uint64, r uint64) uint64 {
	last := nexLastAuction(e)
	lo := uint64(0)
	if last > nexInFlight {
		lo = last - nexInFlight
	}
	return lo + below(r, last-lo+1+nexAuctionLead)
}

// nexLastPerson is PersonGenerator.lastBase0PersonId of event e.
func nexLastPerson(e uint64) uint64 { return e / nexProportionAll }

// nexNextPerson is nextBase0PersonId: one of the active people.
func nexNextPerson(e uint64, r uint64) uint64 {
	last := nexLastPerson(e)
	active := min(last+1, nexActivePeople)
	return last + 1 - active + below(r, active)
}

// bids: {auction, bidder, price, channel, ts}.
type bids struct{ seed uint64 }

func (g *bids) appendRecord(b []byte, n uint64) []byte {
	d := newDraws(g.seed, n)
	e := (n/46)*nexProportionAll + 4 + n%46
	ts := tsEpoch + int64(n)
	auction := nexNextAuction(e, d.draw(1))
	if below(d.draw(0), 2) > 0 { // hot auction ratio 2
		auction = nexLastAuction(e) / nexHotRatio * nexHotRatio
	}
	bidder := nexNextPerson(e, d.draw(3))
	if below(d.draw(2), 4) > 0 { // hot bidders ratio 4
		bidder = nexLastPerson(e)/nexHotRatio*nexHotRatio + 1
	}
	b = abi.AppendInt(abi.AppendArrayHeader(b, 3), ts)
	b = abi.AppendMapHeader(abi.AppendNil(b), 5)
	b = abi.AppendInt(append(b, keyAuction...), int64(auction+nexFirstAuction))
	b = abi.AppendInt(append(b, keyBidder...), int64(bidder+nexFirstPerson))
	b = abi.AppendInt(append(b, keyPrice...), nexPrice(d.draw(4)))
	b = append(b, keyChannel...)
	if c := d.draw(5); below(c, 2) > 0 { // hot channels ratio 2
		b = append(b, hotChannels[below(d.draw(6), 4)]...)
	} else {
		b = appendID(b, "channel-", below(d.draw(6), 10000), 0)
	}
	return abi.AppendInt(append(b, keyTS...), ts)
}

// auctions: {id, seller, category, initialBid, reserve, expires, ts}.
type auctions struct{ seed uint64 }

func (g *auctions) appendRecord(b []byte, n uint64) []byte {
	d := newDraws(g.seed, n)
	e := (n/3)*nexProportionAll + 1 + n%3
	ts := tsEpoch + int64(n)
	seller := nexNextPerson(e, d.draw(1))
	if below(d.draw(0), 4) > 0 { // hot sellers ratio 4
		seller = nexLastPerson(e) / nexHotRatio * nexHotRatio
	}
	initial := nexPrice(d.draw(2))
	b = abi.AppendInt(abi.AppendArrayHeader(b, 3), ts)
	b = abi.AppendMapHeader(abi.AppendNil(b), 7)
	b = abi.AppendInt(append(b, keyID...), int64(n+nexFirstAuction))
	b = abi.AppendInt(append(b, keySeller...), int64(seller+nexFirstPerson))
	b = abi.AppendInt(append(b, keyCategory...), int64(10+below(d.draw(3), nexCategories)))
	b = abi.AppendInt(append(b, keyInitialBid...), initial)
	b = abi.AppendInt(append(b, keyReserve...), initial+nexPrice(d.draw(4)))
	b = abi.AppendInt(append(b, keyExpires...), ts+int64(below(d.draw(5), 10000))+1)
	return abi.AppendInt(append(b, keyTS...), ts)
}
