// Package benthosbench measures Benthos (github.com/redpanda-data/benthos/v4,
// MIT licence) on the work sluice's quickstart does, for the side-by-side in
// docs/benchmarks.md: generate transaction records shaped like sluice's
// `transactions` generator preset (txnId, accountId, amount, currency,
// country, ts) → a bloblang mapping that drops amount <= 0 and doubles the
// amount of the rest → drop.
//
// It is its own module so that Benthos and its dependencies never enter
// sluice's go.mod; `make bench` (bench/cmd/benchtable) runs
//
//	cd bench/benthos && go test -run '^$' -bench . -benchtime 200000x
//
// in the same run as sluice's benchmarks and pairs the figures.
package benthosbench
