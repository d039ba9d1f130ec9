// Command double-go-raw is plugins/double written in Go against the raw ABI,
// with no SDK: the floor of what Go's wasm code can do for the filter+map
// benchmark, measured beside the Go SDK's double in BenchmarkFilterBatch1024
// (double-go-raw). It reads the host's batch index (sluice_process_indexed),
// finds "amount" among each record's fields, and splices the doubled int
// in; everything is in one loop with no call but the codec's. It is a
// benchmark fixture, not an example: it handles what the benchmark sends
// (records the host indexed, an int amount) and refuses a batch without
// an index.
package main

import (
	"unsafe"

	"github.com/sluicehq/sluice/abi"
)

//go:wasmimport sluice_v1 emit
func emit(port int32, ptr unsafe.Pointer, n int32, count int32) int32

var inbuf, out []byte

//go:wasmexport sluice_abi_v1
func exportMarker() {}

//go:wasmexport sluice_buffer
func exportBuffer(size int32) int32 {
	if size <= 0 {
		return 0
	}
	if cap(inbuf) < int(size) {
		inbuf = make([]byte, size)
	}
	inbuf = inbuf[:size]
	return int32(uintptr(unsafe.Pointer(&inbuf[0])))
}

//go:wasmexport sluice_open
func exportOpen(ptr, n, subtask, parallelism, maxParallelism int32) int32 { return 0 }

//go:wasmexport sluice_close
func exportClose() int32 { return 0 }

//go:wasmexport sluice_describe
func exportDescribe() int32 {
	b := abi.AppendMapHeader(nil, 5)
	b = abi.AppendStr(abi.AppendStr(b, "kind"), string(abi.KindFlatMap))
	b = abi.AppendStr(abi.AppendStr(b, "sdk"), "none")
	b = abi.AppendStr(abi.AppendStr(b, "name"), "double-go-raw")
	b = abi.AppendArrayHeader(abi.AppendStr(b, "outputs"), 0)
	b = abi.AppendBool(abi.AppendStr(b, "keyed"), false)
	return emit(0, unsafe.Pointer(&b[0]), int32(len(b)), 1)
}

//go:wasmexport sluice_process
func exportProcess(port, ptr, n, count int32) int32 { return int32(abi.StatusUnsupported) }

// indexRecord is one record entry of the host's batch index (abi.AppendIndex).
type indexRecord struct {
	start, end, key, val uint32
	timeLo, timeHi       uint32
	flags, first         uint32
}

//go:wasmexport sluice_process_indexed
func exportProcessIndexed(port, ptr, n, count, indexPtr, indexLen int32) int32 {
	const rec = abi.IndexRecordWords * 4
	if count < 0 || int(indexLen) < int(count)*rec {
		return int32(abi.StatusMalformed)
	}
	b := unsafe.Slice((*byte)(unsafe.Pointer(uintptr(ptr))), n)
	recs := unsafe.Slice((*indexRecord)(unsafe.Pointer(uintptr(indexPtr))), count)
	fields := unsafe.Slice((*abi.FlatField)(unsafe.Pointer(uintptr(indexPtr)+uintptr(int(count)*rec))), (int(indexLen)-int(count)*rec)/(abi.IndexFieldWords*4))
	out = out[:0]
	emitted := int32(0)
	for i := range recs {
		r := &recs[i]
		if r.flags&abi.IndexFields == 0 {
			return int32(abi.StatusUnsupported)
		}
		v := b[r.val:r.end]
		for _, f := range fields[r.first : r.first+r.flags>>abi.IndexCountShift] {
			if f.Val-f.Key != 6 || string(v[f.Key:f.Val]) != "amount" {
				continue
			}
			a, err := abi.ReadInt(v[f.Val:f.End])
			if err != nil || a <= 0 {
				break
			}
			out = append(out, b[r.start:r.val+uint32(f.Val)]...)
			out = abi.AppendInt(out, 2*a)
			out = append(out, b[r.val+uint32(f.End):r.end]...)
			emitted++
			break
		}
	}
	if emitted == 0 {
		return 0
	}
	return emit(0, unsafe.Pointer(&out[0]), int32(len(out)), emitted)
}

func main() {}
