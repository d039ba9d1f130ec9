package abi

// CheckBatch reports whether batch holds exactly count well-formed
// records, with Reader's error when it does not; it is Reader's verdict
// without Reader's work. Flat records (FlatRecord) are checked in
// one pass that reads each header once; any other record goes through
// ParseRecord. The host runs it on everything a guest emits, so its cost
// is paid on every output record of every Wasm operator.
func CheckBatch(batch []byte, count int) error {
	off := 0
	var flat Flat
	var fields [15]FlatField
	for i := 0; i < count; i++ {
		if off >= len(batch) {
			return readerError(batch, count)
		}
		end := 0
		if FlatRecord(batch, off, &flat, &fields) {
			end = flat.End
		} else {
			var err error
			if _, end, err = ParseRecord(batch, off); err != nil {
				return readerError(batch, count)
			}
		}
		off = end
	}
	if off != len(batch) {
		return readerError(batch, count)
	}
	return nil
}

// readerError is Reader's error for a batch that is not count records.
func readerError(batch []byte, count int) error {
	rd := NewReader(batch, count)
	for rd.Next() {
	}
	if err := rd.Err(); err != nil {
		return err
	}
	// cannot happen: the fast path accepts only what Reader accepts
	return &DecodeError{Err: ErrInvalid, Detail: "the batch check disagrees with the reader"}
}
