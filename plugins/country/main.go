// Command country is a sluice custom partitioner keyed by a country code:
// the configured hot country (config "hot", default "NL") always goes to
// channel 0, every other key hashes (Java hashCode, as Flink) over
// channels 1..n-1. With one channel everything goes to 0.
//
// The skew is deliberate: channel 0 takes the hot country's whole share s
// of the traffic, and each other channel about (1-s)/(n-1). Give the hot
// country a dedicated subtask only when s is near 1/n or above, otherwise
// channel 0 idles while the others queue.
package main

import sdk "github.com/sluicehq/sluice/sdk/go"

var hot = "NL"

func init() {
	sdk.OnOpen(func(ctx sdk.OpenContext) error {
		hot = ctx.ConfigString("hot", "NL")
		return nil
	})
	sdk.Partitioner(partition)
}

// partition returns the channel of a key; a record without a key gets -1,
// which the host reports as an error.
func partition(key sdk.Key, n int) int {
	if n == 1 || string(key.StrBytes()) == hot {
		return 0
	}
	h, err := key.Hash()
	if err != nil {
		return -1
	}
	rest := n - 1
	return 1 + (int(h)%rest+rest)%rest
}

func main() {}
