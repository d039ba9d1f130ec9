// Package benthosbench measures Benthos (github.com/redpanda-data/benthos/v4,
// MIT licence) on the work sluice's quickstart does, for the side-by-side in
// docs/benchmarks.md: generate transaction records shaped like sluice's
// `transactions` generator preset (txnId, accountId, amount, currency,
// country, ts) → a bloblang mapping that drops amount <= 0 and doubles the
// amount of the rest → drop.
//
// BenchmarkBenthosKafka (kafka_test.go) is issue 26's Kafka side-by-side:
// sluice's BenchmarkKafka job (topic → keep amount > 0 → set bank → topic,
// on an in-process kfake broker) as a Benthos stream. Benthos's own Kafka
// connector, kafka_franz, is in Redpanda Connect, which the project does not
// use (its licence), so a franz-go input and output registered through
// Benthos's public plugin API stand in for it.
//
// It is its own module so that Benthos and its dependencies never enter
// sluice's go.mod; `make bench` (bench/cmd/benchtable) runs
//
//	cd bench/benthos && go test -run '^$' -bench . -benchtime 200000x
//
// in the same run as sluice's benchmarks and pairs the figures.
package benthosbench
