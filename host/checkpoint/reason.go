package checkpoint

// FailureReason says why a checkpoint was aborted. The values are those of
// Flink's CheckpointFailureReason that sluice can meet, and Counted follows
// Flink's CheckpointFailureManager.checkFailureCounter
// (apache/flink:flink-runtime/src/main/java/org/apache/flink/runtime/checkpoint/CheckpointFailureManager.java@00fed2be):
// only an I/O error, an asynchronous snapshot failure, a decline and an
// expiry count towards tolerable-failures; the others say the checkpoint
// could not happen rather than that checkpointing is broken.
type FailureReason uint8

const (
	// ReasonDeclined (CHECKPOINT_DECLINED): a task could not take its
	// snapshot (a plugin trapped in its snapshot export, say). Counted.
	ReasonDeclined FailureReason = iota + 1
	// ReasonAsyncFailure (CHECKPOINT_ASYNC_EXCEPTION): a task's snapshot
	// could not be written (its state file: a full disk, say). Counted.
	ReasonAsyncFailure
	// ReasonIO (IO_EXCEPTION). Counted.
	ReasonIO
	// ReasonExpired (CHECKPOINT_EXPIRED): the timeout passed before every
	// task acknowledged. Counted.
	ReasonExpired
	// ReasonSubsumed (CHECKPOINT_SUBSUMED): a newer checkpoint completed
	// first.
	ReasonSubsumed
	// ReasonDeclinedSubsumed (CHECKPOINT_DECLINED_SUBSUMED): a task saw a
	// newer barrier before this one was aligned.
	ReasonDeclinedSubsumed
	// ReasonDeclinedOnCancellationBarrier
	// (CHECKPOINT_DECLINED_ON_CANCELLATION_BARRIER): a task received the
	// checkpoint's cancel marker.
	ReasonDeclinedOnCancellationBarrier
	// ReasonDeclinedInputEndOfStream
	// (CHECKPOINT_DECLINED_INPUT_END_OF_STREAM): an input ended during
	// alignment.
	ReasonDeclinedInputEndOfStream
	// ReasonDeclinedTaskNotReady (CHECKPOINT_DECLINED_TASK_NOT_READY): a
	// task was not running yet.
	ReasonDeclinedTaskNotReady
	// ReasonDeclinedTaskClosing (CHECKPOINT_DECLINED_TASK_CLOSING): a task
	// (a source whose input ended, say) was closing.
	ReasonDeclinedTaskClosing
	// ReasonTaskFailure (TASK_FAILURE): a task failed; the job restarts.
	ReasonTaskFailure
	// ReasonJobFailure (JOB_FAILURE): the job failed.
	ReasonJobFailure
	// ReasonFinalizeFailure (FINALIZE_CHECKPOINT_FAILURE): the _metadata
	// could not be written. Not counted, as in Flink.
	ReasonFinalizeFailure
	// ReasonCoordinatorShutdown (CHECKPOINT_COORDINATOR_SHUTDOWN): the job
	// stopped.
	ReasonCoordinatorShutdown
)

var reasonText = [...]string{
	ReasonDeclined:                      "declined by a task",
	ReasonAsyncFailure:                  "a task could not write its snapshot",
	ReasonIO:                            "i/o error",
	ReasonExpired:                       "expired before completing",
	ReasonSubsumed:                      "subsumed by a newer checkpoint",
	ReasonDeclinedSubsumed:              "declined: a task saw a newer barrier first",
	ReasonDeclinedOnCancellationBarrier: "declined: cancelled by a task",
	ReasonDeclinedInputEndOfStream:      "declined: an input ended during alignment",
	ReasonDeclinedTaskNotReady:          "declined: a task was not ready",
	ReasonDeclinedTaskClosing:           "declined: a task was closing",
	ReasonTaskFailure:                   "a task failed",
	ReasonJobFailure:                    "the job failed",
	ReasonFinalizeFailure:               "the metadata could not be written",
	ReasonCoordinatorShutdown:           "the job stopped",
}

func (r FailureReason) String() string {
	if int(r) < len(reasonText) && reasonText[r] != "" {
		return reasonText[r]
	}
	return "unknown reason"
}

// Counted tells whether a failure for this reason counts towards
// tolerable-failures (Flink's checkFailureCounter).
func (r FailureReason) Counted() bool {
	switch r {
	case ReasonDeclined, ReasonAsyncFailure, ReasonIO, ReasonExpired:
		return true
	}
	return false
}
