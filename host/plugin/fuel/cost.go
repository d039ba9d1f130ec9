package fuel

// Costs beyond one fuel per instruction, for the instructions whose run
// time is not that of a simple instruction (CostRegion only). The unit is
// the tight loop's rate: BenchmarkRunaway measures 0.15–0.2 ns per fuel
// on the reference machine (wazero 1.12 compiler, AMD EPYC), and the
// figures below were measured there too. Overcharging is harmless; what
// matters is that no instruction can take much longer than its charge, so
// a budget bounds time as well as instructions.
const (
	// weightGrow is the static charge of memory.grow and table.grow,
	// which call into Go (about 30 ns each).
	weightGrow = 128
	// weightBulk is the static charge of memory.init/copy/fill and
	// table.init/copy/fill (5–25 ns before any byte moves).
	weightBulk = 32
	// bulkByteShift: memory.init/copy/fill also pay n>>3 at run time, one
	// fuel per 8 bytes moved (they move 0.015–0.05 ns per byte).
	bulkByteShift = 3
	// bulkElemShift: table.init/copy/fill also pay n<<6 at run time, 64
	// fuel per element (table.fill takes about 27 ns per element).
	bulkElemShift = 6
)

// weight is what an instruction of kind k adds to its region's charge.
func weight(k kind) uint64 {
	switch k {
	case kGrow:
		return weightGrow
	case kBulkMemory, kBulkTable:
		return weightBulk
	}
	return 1
}
