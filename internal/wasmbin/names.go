package wasmbin

// NameSectionWellFormed reports whether the contents of a "name" custom
// section (§7.4.1 "Name Section") are well formed: subsections that
// exactly fill the section, and the module, function and local name
// subsections (ids 0, 1, 2) exactly filled by their contents.
func NameSectionWellFormed(contents []byte) bool {
	r := NewReader(contents, 0)
	for !r.EOF() {
		id, err := r.Byte()
		if err != nil {
			return false
		}
		sub, err := r.Vec()
		if err != nil {
			return false
		}
		s := NewReader(sub, 0)
		switch id {
		case 0: // module name
			_, err = s.Name()
		case 1: // function names: namemap
			err = readNameMap(s, nil)
		case 2: // local names: vec(idx namemap)
			var n uint32
			if n, err = s.Count(); err == nil {
				for ; n > 0 && err == nil; n-- {
					if _, err = s.U32(); err == nil {
						err = readNameMap(s, nil)
					}
				}
			}
		default: // other subsections are opaque
			continue
		}
		if err != nil || !s.EOF() {
			return false
		}
	}
	return true
}

// readNameMap reads vec(idx name), calling each (when not nil) for every
// entry until it returns false.
func readNameMap(r *Reader, each func(index uint32, name []byte) bool) error {
	n, err := r.Count()
	if err != nil {
		return err
	}
	for ; n > 0; n-- {
		i, err := r.U32()
		if err != nil {
			return err
		}
		name, err := r.Name()
		if err != nil {
			return err
		}
		if each != nil && !each(i, name) {
			return nil
		}
	}
	return nil
}

// FunctionName looks index (in the function index space, imports first)
// up in the function names of the "name" custom section, if the module
// has a readable one.
func FunctionName(sections []Section, index uint32) (string, bool) {
	for _, s := range sections {
		if s.ID != SecCustom || s.Name != "name" {
			continue
		}
		r := NewReader(s.Body, 0)
		for !r.EOF() {
			id, err := r.Byte()
			if err != nil {
				return "", false
			}
			sub, err := r.Vec()
			if err != nil {
				return "", false
			}
			if id != 1 {
				continue
			}
			var name string
			found := false
			err = readNameMap(NewReader(sub, 0), func(i uint32, n []byte) bool {
				if i == index {
					name, found = string(n), true
				}
				return !found
			})
			return name, err == nil && found
		}
	}
	return "", false
}

// NameMap reads a namemap, vec(idx name), and drops it.
func (r *Reader) NameMap() error { return readNameMap(r, nil) }
