package wasmbin

// FuncType is a function type; its value types are one byte each and
// alias the module.
type FuncType struct{ Params, Results []byte }

// Import is one entry of the import section (§5.5.5).
type Import struct {
	Module, Name string
	Kind         byte
	Type         uint32     // KindFunc and KindTag: the type index
	Table        byte       // KindTable: the reference type
	Limits       Limits     // KindTable and KindMemory
	Global       GlobalType // KindGlobal
	At           int        // the module offset of the entry
}

// Table is a table the module defines (§5.5.7).
type Table struct {
	RefType byte
	Limits  Limits
}

// Export is one entry of the export section (§5.5.10).
type Export struct {
	Name  string
	Kind  byte
	Index uint32
}

// Module is what Decode reads of a module: its sections, and those that
// say what it is. Function and global indices count imports first.
type Module struct {
	Sections []Section
	Types    []FuncType
	Imports  []Import
	// ImportedFuncs and ImportedGlobals count the imports of each kind:
	// they come first in their index spaces (§5.5.1 "Indices").
	ImportedFuncs, ImportedGlobals uint32
	Funcs                          []uint32 // the type index of every function the module defines
	Tables                         []Table  // defined ones
	Memories                       []Limits // defined ones
	Exports                        []Export
}

// Section returns the module's section id (not a custom one), or nil.
func (m *Module) Section(id byte) *Section {
	for i := range m.Sections {
		if m.Sections[i].ID == id && id != SecCustom {
			return &m.Sections[i]
		}
	}
	return nil
}

// Decode splits wasm into sections and decodes its types, imports,
// functions, tables, memories and exports. The other sections (globals,
// start, elements, code, data, custom) are left to the consumer, which
// reads each Section's Payload.
func Decode(wasm []byte) (*Module, error) {
	sections, err := Split(wasm)
	if err != nil {
		return nil, err
	}
	m := &Module{Sections: sections}
	for i := range sections {
		s := &sections[i]
		r := s.Reader()
		switch s.ID {
		case SecType:
			err = m.readTypes(r)
		case SecImport:
			err = m.readImports(r)
		case SecFunction:
			err = m.readFunctions(r)
		case SecTable:
			err = m.readTables(r)
		case SecMemory:
			err = m.readMemories(r)
		case SecExport:
			err = m.readExports(r)
		default:
			continue
		}
		if err == nil {
			err = r.Trailing()
		}
		if err != nil {
			return nil, err
		}
	}
	return m, nil
}

// readTypes reads the type section (§5.5.4): function types only (GC's
// recursive and sub types are refused).
func (m *Module) readTypes(r *Reader) error {
	n, err := r.Count()
	if err != nil {
		return err
	}
	m.Types = make([]FuncType, n)
	for i := range m.Types {
		c, err := r.Byte()
		if err != nil {
			return err
		}
		if c != 0x60 {
			r.Off--
			return r.Errorf(ErrUnsupported, "type %d has form %#02x (only function types, 0x60)", i, c)
		}
		if m.Types[i].Params, err = r.ValTypes(); err != nil {
			return err
		}
		if m.Types[i].Results, err = r.ValTypes(); err != nil {
			return err
		}
	}
	return nil
}

func (m *Module) readImports(r *Reader) error {
	n, err := r.Count()
	if err != nil {
		return err
	}
	m.Imports = make([]Import, 0, n)
	for ; n > 0; n-- {
		im := Import{At: r.Pos()}
		module, err := r.Name()
		if err != nil {
			return err
		}
		name, err := r.Name()
		if err != nil {
			return err
		}
		im.Module, im.Name = string(module), string(name)
		if im.Kind, err = r.Byte(); err != nil {
			return err
		}
		switch im.Kind {
		case KindFunc:
			im.Type, err = r.Index(uint32(len(m.Types)), ErrMalformed, "type")
			m.ImportedFuncs++
		case KindTable:
			if im.Table, err = r.RefType(); err == nil {
				im.Limits, err = r.Limits()
			}
		case KindMemory:
			im.Limits, err = r.Limits()
		case KindGlobal:
			im.Global, err = r.GlobalType()
			m.ImportedGlobals++
		case KindTag: // attribute 0 (exception), type index (not checked: no consumer runs tags)
			if _, err = r.Byte(); err == nil {
				im.Type, err = r.U32()
			}
		default:
			r.Off--
			err = r.Errorf(ErrMalformed, "import %s.%s has unknown kind %#02x", im.Module, im.Name, im.Kind)
		}
		if err != nil {
			return err
		}
		m.Imports = append(m.Imports, im)
	}
	return nil
}

func (m *Module) readFunctions(r *Reader) error {
	n, err := r.Count()
	if err != nil {
		return err
	}
	m.Funcs = make([]uint32, n)
	for i := range m.Funcs {
		if m.Funcs[i], err = r.Index(uint32(len(m.Types)), ErrMalformed, "type"); err != nil {
			return err
		}
	}
	return nil
}

func (m *Module) readTables(r *Reader) error {
	n, err := r.Count()
	if err != nil {
		return err
	}
	m.Tables = make([]Table, n)
	for i := range m.Tables {
		if m.Tables[i].RefType, err = r.RefType(); err != nil {
			return err
		}
		if m.Tables[i].Limits, err = r.Limits(); err != nil {
			return err
		}
	}
	return nil
}

func (m *Module) readMemories(r *Reader) error {
	n, err := r.Count()
	if err != nil {
		return err
	}
	m.Memories = make([]Limits, n)
	for i := range m.Memories {
		if m.Memories[i], err = r.Limits(); err != nil {
			return err
		}
	}
	return nil
}

func (m *Module) readExports(r *Reader) error {
	n, err := r.Count()
	if err != nil {
		return err
	}
	m.Exports = make([]Export, n)
	for i := range m.Exports {
		name, err := r.Name()
		if err != nil {
			return err
		}
		e := &m.Exports[i]
		e.Name = string(name)
		if e.Kind, err = r.Byte(); err != nil {
			return err
		}
		if e.Kind > KindTag {
			r.Off--
			return r.Errorf(ErrMalformed, "export %q has unknown kind %#02x", e.Name, e.Kind)
		}
		if e.Index, err = r.U32(); err != nil {
			return err
		}
	}
	return nil
}
