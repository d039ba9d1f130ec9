package checkpoint

import "time"

// Status of a checkpoint in Stats.
type Status uint8

const (
	StatusInProgress Status = iota
	StatusCompleted
	StatusFailed
)

func (s Status) String() string {
	switch s {
	case StatusCompleted:
		return "completed"
	case StatusFailed:
		return "failed"
	}
	return "in_progress"
}

// Stats are the checkpoint statistics the dashboard, the REST API and the
// metrics show, under Flink's names. Savepoints count as checkpoints in
// the counters, as in Flink's checkpoint statistics.
type Stats struct {
	NumberOfCompletedCheckpoints  int
	NumberOfFailedCheckpoints     int
	NumberOfInProgressCheckpoints int
	// LastCheckpointDuration and LastCheckpointSize are those of the
	// latest completed checkpoint: trigger to durable metadata, and the
	// bytes of its state files.
	LastCheckpointDuration time.Duration
	LastCheckpointSize     int64
	LastCompletedID        ID
	// ConsecutiveFailures is the failure counter tolerable-failures is
	// checked against (Flink's continuousFailureCounter).
	ConsecutiveFailures int
	// Restored is the checkpoint the job was restored from (0: none).
	Restored ID
	// History holds the latest checkpoints, newest first.
	History []CheckpointStats
}

// CheckpointStats describe one checkpoint or savepoint.
type CheckpointStats struct {
	ID        ID
	Kind      Kind
	Status    Status
	Triggered time.Time
	// Duration runs from the trigger to the completion or failure; while
	// in progress, to the latest acknowledgement.
	Duration      time.Duration
	Size          int64 // bytes of the state files acknowledged so far
	Acknowledged  int   // tasks that acknowledged
	Tasks         int   // tasks that must acknowledge
	FailureReason FailureReason
	FailureCause  string
	Subtasks      []SubtaskStats // in the order they acknowledged
}

// SubtaskStats are one task's part of a checkpoint.
type SubtaskStats struct {
	Task         Task
	Acknowledged time.Time
	Size         int64
	Alignment    time.Duration
	Sync         time.Duration
	Async        time.Duration
}
