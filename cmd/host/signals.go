package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync"
	"syscall"
)

// signalError is the cause of the CLI's context when a signal cancelled
// it. It is a context.Canceled, as signal.NotifyContext's cause is: the
// runtime tells a cancelled job from a failed one by that.
type signalError struct{ sig os.Signal }

func (e *signalError) Error() string { return e.sig.String() + " signal received" }

func (e *signalError) Is(target error) bool { return target == context.Canceled }

// signalContext returns a context that the first SIGINT or SIGTERM
// cancels, with a *signalError cause. That first signal also gives both
// signals back their default action, so a second one ends the process at
// once, even when the command cannot return (a print sink blocked writing
// to a full pipe, a drain that takes its time), as Flink's CLI and most
// Unix tools do. stop releases the signals and the context.
func signalContext() (ctx context.Context, stop func()) {
	ctx, cancel := context.WithCancelCause(context.Background())
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	go func() {
		select {
		case sig := <-ch:
			signal.Stop(ch) // before anyone says "again to quit at once"
			cancel(&signalError{sig})
		case <-ctx.Done():
		}
	}()
	return ctx, func() { signal.Stop(ch); cancel(nil) }
}

// signalled is the signal that cancelled ctx, nil when none did.
func signalled(ctx context.Context) os.Signal {
	var se *signalError
	if errors.As(context.Cause(ctx), &se) {
		return se.sig
	}
	return nil
}

// againHint says how to quit at once once sig has cancelled the command.
func againHint(sig os.Signal) string {
	if sig == os.Interrupt {
		return "interrupt again to quit at once"
	}
	if sig == syscall.SIGTERM {
		return "send SIGTERM again to quit at once"
	}
	return fmt.Sprintf("send %s again to quit at once", sig)
}

// cancelExit is the exit code of a command that ctx's cancellation
// stopped: 128+signal, as shells, systemd and timeout expect (130 for
// SIGINT, 143 for SIGTERM), and 130 when no signal cancelled it.
func cancelExit(ctx context.Context) exitCode {
	if sig, ok := signalled(ctx).(syscall.Signal); ok {
		return exitCode(128 + int(sig))
	}
	return exitCode(128 + int(syscall.SIGINT))
}

// announceCancel prints "<what> (interrupt again to quit at once)" to w,
// once, when a signal cancels ctx. The function it returns stops that, and
// waits for a notice being printed, so the notice comes before whatever
// the caller prints next (the summary). Calls after the first do nothing.
func announceCancel(ctx context.Context, w io.Writer, what string) func() {
	printed := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		defer close(printed)
		if sig := signalled(ctx); sig != nil {
			fmt.Fprintf(w, "%s (%s)\n", what, againHint(sig))
		}
	})
	return sync.OnceFunc(func() {
		if !stop() { // the notice is being printed
			<-printed
		}
	})
}

// syncWriter serialises writes to w from the command and from the
// goroutines that log or announce a cancellation.
type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}
