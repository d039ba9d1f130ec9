//go:build !wasip1

// The SDK tests drive operators through the native fake host.

package sdk_test

import (
	"github.com/sluicehq/sluice/abi"
	"github.com/sluicehq/sluice/sdk/go/internal/hostcall"
)

// recHost is a bare host for tests that need raw batches or several calls
// on one instance: it records every emit and the error text, and can be
// told to refuse emits.
type recHost struct {
	emits     []recEmit
	text      string
	emitSt    int32 // returned by Emit
	portCalls int
}

type recEmit struct {
	port  int32
	buf   []byte
	count int32
}

// newRecHost installs a fresh recHost and a fresh instance.
func newRecHost() *recHost {
	h := &recHost{}
	hostcall.Fake = h
	hostcall.Guest.NewInstance()
	return h
}

func (h *recHost) process(port int32, batch []byte, count int32) abi.Status {
	h.text = ""
	return abi.Status(hostcall.Guest.Process(port, batch, count))
}

func (h *recHost) Emit(port int32, buf []byte, count int32) int32 {
	if h.emitSt == 0 {
		h.emits = append(h.emits, recEmit{port, append([]byte(nil), buf...), count})
	}
	return h.emitSt
}

func (h *recHost) Port(tag string) int32 {
	h.portCalls++
	if tag == "dropped" {
		return -1
	}
	return 7
}

func (h *recHost) Error(text string)                    { h.text = text }
func (h *recHost) StateGet(int32, []byte, []byte) int32 { return -1 }
func (h *recHost) StatePut(int32, []byte, []byte) int32 { return int32(abi.StatusState) }
func (h *recHost) StateDel(int32, []byte) int32         { return int32(abi.StatusState) }

func hostcallPartition(batch []byte, count, n int32) int32 {
	return hostcall.Guest.Partition(batch, count, n)
}

func openRaw(cfg []byte) int32 { return hostcall.Guest.Open(cfg, 0, 1, 128) }
