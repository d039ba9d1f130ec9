package kafka

import (
	"strings"
	"sync"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestFetchSizes: max-partition-fetch-bytes and fetch-max-bytes reach the
// fetch requests the broker sees (kfake's control hook reads them), the
// client's defaults (1 MiB, 50 MiB) apply without them, and a bounded
// read with a per-partition limit of a few records still reads all.
func TestFetchSizes(t *testing.T) {
	for _, tc := range []struct {
		name          string
		part, whole   int32
		wantPartition int32
		wantWhole     int32
	}{
		{"defaults", 0, 0, 1 << 20, 50 << 20},
		{"set", 256, 4096, 256, 4096},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := testContext(t)
			c := startCluster(t, 1, map[string]int32{"in": 2})
			// 20 records a Produce call, so a batch of 10 a partition: a
			// fetch returns a partition's first batch whatever its size
			recs := jsonRecords("in", 0, 400, 2)
			for i := 0; i < len(recs); i += 20 {
				if err := c.Produce(ctx, false, recs[i:i+20]...); err != nil {
					t.Fatal(err)
				}
			}
			var mu sync.Mutex
			var fetches int
			whole, parts := map[int32]bool{}, map[int32]bool{}
			c.ControlKey(int16(kmsg.Fetch), func(req kmsg.Request) (kmsg.Response, error, bool) {
				c.KeepControl()
				f := req.(*kmsg.FetchRequest)
				mu.Lock()
				defer mu.Unlock()
				n := 0
				for _, tp := range f.Topics {
					for _, p := range tp.Partitions {
						parts[p.PartitionMaxBytes] = true
						n++
					}
				}
				if n > 0 { // requests naming no partition are not reads
					fetches++
					whole[f.MaxBytes] = true
				}
				return nil, nil, false
			})
			cfg := sourceConfig(c, "in")
			cfg.Bounded, cfg.MaxPartitionFetchBytes, cfg.FetchMaxBytes = true, tc.part, tc.whole
			s, err := NewSource(cfg, 0, 1)
			if err != nil {
				t.Fatal(err)
			}
			out := newCollector()
			if err := runSource(ctx, s, out); err != nil {
				t.Fatal(err)
			}
			if got := values(out.records()); !sameStrings(got, wantValues(0, 400)) {
				t.Fatalf("read %d records, want the 400 once", len(got))
			}
			mu.Lock()
			defer mu.Unlock()
			if len(whole) != 1 || !whole[tc.wantWhole] || len(parts) != 1 || !parts[tc.wantPartition] {
				t.Fatalf("fetch requests asked for response sizes %v and partition sizes %v, want only %d and %d",
					whole, parts, tc.wantWhole, tc.wantPartition)
			}
			// 20 batches a partition of ~400 bytes each: at most 256 bytes
			// a partition returns one batch a fetch, the default all
			if tc.part > 0 && fetches < 20 {
				t.Fatalf("%d fetches with %d bytes a partition, want many", fetches, tc.part)
			}
			t.Logf("%d fetches", fetches)
		})
	}
}

// TestFetchSizesRefused: a negative size names the option.
func TestFetchSizesRefused(t *testing.T) {
	cfg := SourceConfig{Operator: "in", Connection: Connection{Brokers: []string{"127.0.0.1:9092"}}, Topics: []string{"t"},
		MaxPartitionFetchBytes: -1, FetchMaxBytes: -2}
	err := cfg.Validate()
	if err == nil || !strings.Contains(err.Error(), "max-partition-fetch-bytes") || !strings.Contains(err.Error(), "fetch-max-bytes") {
		t.Fatalf("Validate: %v, want both options named", err)
	}
}
