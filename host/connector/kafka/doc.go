// Package kafka is sluice's Kafka source and sink, on franz-go, with
// Flink's KafkaSource and KafkaSink semantics (docs/kafka.md).
//
// The source assigns partitions to its subtasks with Flink's
// KafkaSourceEnumerator rule (SplitOwner) and consumes them directly, with
// no consumer-group balancing; its positions (the next offset of each
// partition) are its checkpointed state, and they are committed to the
// group when a checkpoint completes, for monitoring only. The sink writes
// with delivery none, at-least-once (a flush at each checkpoint) or
// exactly-once (one Kafka transaction per subtask and checkpoint,
// committed when the checkpoint completes, Flink's two-phase commit); a
// restore commits the checkpoint's transactions with a raw EndTxn and
// aborts the ones a crashed run left open (RATIONALE.md).
//
// SourceConfig and SinkConfig are the options; NewSource and NewSink make
// one subtask's runtime.Source and runtime.Operator. Both also have
// SnapshotState, RestoreState and NotifyCheckpointComplete for the
// engine's checkpoints, and Metrics. kafkatest starts an in-process kfake
// broker for tests.
package kafka
