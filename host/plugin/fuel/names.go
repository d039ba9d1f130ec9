package fuel

// nameSectionWellFormed reports whether the contents of a "name" custom
// section (WebAssembly Core Specification 2.0, §7.4.1 "Name Section") are
// well formed: subsections that exactly fill the section, and the module,
// function and local name subsections (ids 0, 1, 2) exactly filled by
// their contents. Instrument drops a malformed name section instead of
// passing it on: wazero 1.12 decodes name subsections without bounding
// them, so one that overruns the module's last section reads as garbage
// the sections Instrument appends after it.
func nameSectionWellFormed(contents []byte) bool {
	r := newReader(contents, 0)
	for !r.eof() {
		id, err := r.byte()
		if err != nil {
			return false
		}
		size, err := r.u32()
		if err != nil {
			return false
		}
		sub, err := r.bytes(uint64(size))
		if err != nil {
			return false
		}
		s := newReader(sub, 0)
		switch id {
		case 0: // module name
			_, err = s.name()
		case 1: // function names: namemap
			err = readNameMap(s)
		case 2: // local names: vec(idx namemap)
			var n uint32
			if n, err = s.count(); err == nil {
				for ; n > 0 && err == nil; n-- {
					if _, err = s.u32(); err == nil {
						err = readNameMap(s)
					}
				}
			}
		default: // other subsections are opaque
			continue
		}
		if err != nil || !s.eof() {
			return false
		}
	}
	return true
}

// readNameMap reads vec(idx name).
func readNameMap(r *reader) error {
	n, err := r.count()
	if err != nil {
		return err
	}
	for ; n > 0; n-- {
		if _, err := r.u32(); err != nil {
			return err
		}
		if _, err := r.name(); err != nil {
			return err
		}
	}
	return nil
}
