package spec

import "math"

// Generator is the generator source: records made up from a seed, in one
// of six presets.
var Generator = &Connector{
	Name:    "generator",
	Role:    Source,
	Summary: "made-up records of one of six presets, repeatable from a seed",
	Doc: "Record n of a preset depends only on the seed, the preset's options and n, so any parallelism " +
		"yields the same records: subtask i of p produces the records whose sequence number is i mod p, in " +
		"increasing order. `count` and `rate` are for the whole source, not per subtask. Records of " +
		"`transactions`, `sensors`, `bids` and `auctions` carry an event time, `ts`: record n's is 2024-01-01T00:00:00Z plus n " +
		"milliseconds; `words` and `sequence` carry none.",
	Options: []Option{
		{Name: "preset", Type: Enum, Required: true, Choices: []string{"transactions", "sensors", "words", "sequence", "bids", "auctions"},
			Doc: "what the records look like (see [the presets](#generator-presets))"},
		{Name: "count", Type: Int, Min: 0, Max: 1 << 53, DefaultDoc: "none: unbounded",
			Doc: "records for the whole source; without it the source never ends"},
		{Name: "rate", Type: Number, Min: 0, Max: 1e12, Default: 0.0,
			Doc: "records per second for the whole source; 0: as fast as downstream takes them"},
		{Name: "seed", Type: Int, Min: -1 << 53, Max: 1 << 53, Default: int64(0),
			Doc: "the seed every random draw is made from"},
		{Name: "accounts", Type: Int, Min: 1, Max: 1e15, Default: int64(1000), Only: &Only{"preset", []string{"transactions"}},
			Doc: "distinct accounts"},
		{Name: "devices", Type: Int, Min: 1, Max: 1e15, Default: int64(100), Only: &Only{"preset", []string{"sensors"}},
			Doc: "distinct devices"},
		{Name: "hot-key", Type: String, Only: &Only{"preset", []string{"transactions", "sensors"}},
			Doc: "the account or device of the skewed share of records"},
		{Name: "skew", Type: Number, Min: 0, Max: 1, Default: 0.0, Only: &Only{"preset", []string{"transactions", "sensors"}},
			Doc: "the share of records (0 to 1) that carry `hot-key`: a hot key, as real data has"},
	},
	Boundedness: func(opts map[string]any) Boundedness {
		if c, ok := opts["count"]; ok && c != nil {
			return Bounded
		}
		return Unbounded
	},
	UnboundedWhy: "a generator without count",
	BoundedDoc:   "with `count`",
	Example: `version: 1
name: payments
parallelism: 2
operators:
  - id: txns
    source: { type: generator, preset: transactions, count: 1000, rate: 5000, seed: 7, skew: 0.3 }
  - id: per-account
    key-by: accountId
    sum: amount
  - id: out
    sink: { type: discard }
`,
	Replayable:    true,
	Contained:     true,
	Guarantee:     ExactlyOnce,
	VariantOption: "preset",
	Variants: []Variant{
		{Name: "transactions", Doc: "payments between accounts", Defaults: map[string]any{"hot-key": "acct-corp"}, Fields: []Field{
			{Name: "txnId", Type: "string", Doc: "`t` and the sequence number, at least 9 digits: `t000000042`"},
			{Name: "accountId", Type: "string", Doc: "`acct-` and a number below `accounts`, at least 4 digits (`acct-0042`), or `hot-key`"},
			{Name: "amount", Type: "int", Min: -10000, Max: 10000, Doc: "cents; about half are above 0"},
			{Name: "currency", Type: "string", Doc: "`EUR`, `USD` or `GBP`"},
			{Name: "country", Type: "string", Doc: "`NL`, `DE`, `US`, `FR`, `GB`, `ES`, `IT` or `BE`"},
			{Name: "ts", Type: "int", Min: tsEpoch, Max: math.MaxInt64, Doc: "the event time, in milliseconds since 1970"},
		}},
		{Name: "sensors", Doc: "readings of devices", Defaults: map[string]any{"hot-key": "sensor-hot"}, Fields: []Field{
			{Name: "deviceId", Type: "string", Doc: "`sensor-` and a number below `devices`, at least 3 digits (`sensor-042`), or `hot-key`"},
			{Name: "ts", Type: "int", Min: tsEpoch, Max: math.MaxInt64, Doc: "the event time, in milliseconds since 1970"},
			{Name: "value", Type: "float", Min: -10, Max: 90, Doc: "two decimals: in [-10, 30], and for 3 % of the readings a spike in [50, 90]"},
		}},
		{Name: "words", Doc: "lines of text, for word counts", Fields: []Field{
			{Name: "line", Type: "string", Doc: "3 to 12 words from a vocabulary of 64, separated by one space; early words of the vocabulary (`the`, `a`, `to`) are drawn more often"},
		}},
		{Name: "sequence", Doc: "the sequence numbers themselves", Fields: []Field{
			{Name: "n", Type: "int", Min: 0, Max: 1 << 53, Doc: "the record's sequence number: 0, 1, 2, ..."},
		}},
		{Name: "bids", Doc: "Nexmark's bids (the bids of its reference generator's event stream: hot auctions, bidders and channels as its defaults), for the Nexmark queries", Fields: []Field{
			{Name: "auction", Type: "int", Min: 1000, Max: math.MaxInt64, Doc: "the auction's id: half the bids go to a hot auction (a multiple of 100 above 1000), the others to one of the 100 auctions in flight"},
			{Name: "bidder", Type: "int", Min: 1000, Max: math.MaxInt64, Doc: "the bidder's person id; 3 in 4 bids come from a hot bidder"},
			{Name: "price", Type: "int", Min: 100, Max: 100000000, Doc: "cents: 10^(6u) * 100 rounded, u uniform in [0, 1)"},
			{Name: "channel", Type: "string", Doc: "`Google`, `Facebook`, `Baidu` or `Apple` for half the bids, else `channel-` and a number below 10000"},
			{Name: "ts", Type: "int", Min: tsEpoch, Max: math.MaxInt64, Doc: "the event time, in milliseconds since 1970"},
		}},
		{Name: "auctions", Doc: "Nexmark's auctions (its reference generator's), for the Nexmark queries", Fields: []Field{
			{Name: "id", Type: "int", Min: 1000, Max: math.MaxInt64, Doc: "1000 + the sequence number"},
			{Name: "seller", Type: "int", Min: 1000, Max: math.MaxInt64, Doc: "the seller's person id; 3 in 4 auctions are a hot seller's"},
			{Name: "category", Type: "int", Min: 10, Max: 14, Doc: "one of 5 categories"},
			{Name: "initialBid", Type: "int", Min: 100, Max: 100000000, Doc: "cents, drawn as a bid's price"},
			{Name: "reserve", Type: "int", Min: 200, Max: 200000000, Doc: "cents: the initial bid plus another such price"},
			{Name: "expires", Type: "int", Min: tsEpoch, Max: math.MaxInt64, Doc: "when the auction ends: up to 10 s after ts, in milliseconds since 1970"},
			{Name: "ts", Type: "int", Min: tsEpoch, Max: math.MaxInt64, Doc: "the event time, in milliseconds since 1970"},
		}},
	},
}

// tsEpoch is the event time of record 0 of a timed preset:
// 2024-01-01T00:00:00Z in milliseconds.
const tsEpoch = 1_704_067_200_000

// TimeEpoch is the event time of a generator's record 0, in milliseconds.
const TimeEpoch int64 = tsEpoch
