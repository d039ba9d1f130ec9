// Command goloop is a Go wasip1 reactor for the fuel tests: a real Go
// module exercises the instrumenter's decoder on the whole Go runtime.
package main

// spin runs n rounds of a linear congruential generator, forever if n < 0.
//
//go:wasmexport spin
func spin(n int32) int32 {
	x := uint32(1)
	for i := int32(0); n < 0 || i < n; i++ {
		x = x*1664525 + 1013904223
	}
	return int32(x)
}

// churn allocates and sorts, to run the runtime's allocator and GC.
//
//go:wasmexport churn
func churn(n int32) int32 {
	m := map[int32][]byte{}
	for i := int32(0); i < n; i++ {
		m[i%64] = append(m[i%64], byte(i))
	}
	s := int32(0)
	for _, b := range m {
		s += int32(len(b))
	}
	return s
}

func main() {}
