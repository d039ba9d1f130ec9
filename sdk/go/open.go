package sdk

import (
	"strings"

	"github.com/sluicehq/sluice/abi"
	"github.com/sluicehq/sluice/sdk/go/internal/mpvalue"
)

// open implements sluice_open: decode the config and run the OnOpen hook.
func (e *engine) open(cfg []byte, subtask, parallelism, maxParallelism int32) error {
	e.cfg = openState{raw: append([]byte(nil), cfg...)}
	m, err := mpvalue.DecodeMap(e.cfg.raw)
	if err != nil {
		return &Error{Status: abi.StatusConfig, Text: "config: " + err.Error()}
	}
	if reg.onOpen == nil {
		return nil
	}
	ctx := OpenContext{
		Config:         m,
		Subtask:        int(subtask),
		Parallelism:    int(parallelism),
		MaxParallelism: int(maxParallelism),
		st:             &e.cfg,
	}
	if err := reg.onOpen(ctx); err != nil {
		return prefixed("open: ", err, abi.StatusConfig)
	}
	if len(e.cfg.errs) > 0 {
		return &Error{Status: abi.StatusConfig, Text: strings.Join(e.cfg.errs, "; ")}
	}
	return nil
}

// close implements sluice_close: run the OnFinish hook (which may emit),
// then the OnClose hook.
func (e *engine) close() error {
	if reg.onFinish != nil {
		e.beginCall()
		e.inCall = true
		err := reg.onFinish(Emitter{})
		if err == nil {
			err = e.err
		}
		e.arena.release()
		e.cur, e.err, e.inCall = nil, nil, false
		if err != nil {
			return prefixed("finish: ", err, abi.StatusUser)
		}
		if err := e.flush(); err != nil {
			return err
		}
	}
	if reg.onClose == nil {
		return nil
	}
	if err := reg.onClose(); err != nil {
		return prefixed("close: ", err, abi.StatusUser)
	}
	return nil
}
