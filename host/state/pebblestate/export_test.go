package pebblestate

import "context"

// Compact compacts the whole database, for benchmarks that measure a
// steady state rather than the compactions a bulk load leaves behind.
func (s *Store) Compact() error {
	return s.db.Compact(context.Background(), []byte{0}, []byte{0xff, 0xff, 0xff, 0xff, 0xff}, true)
}
