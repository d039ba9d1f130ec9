package server

import (
	"encoding/json"
	"fmt"
	"sync"

	"github.com/sluicehq/sluice/abi"
	"github.com/sluicehq/sluice/host/codec"
	"github.com/sluicehq/sluice/host/connector"
	"github.com/sluicehq/sluice/host/connector/spec"
	"github.com/sluicehq/sluice/host/jsonout"
	"github.com/sluicehq/sluice/host/runtime"
)

// tail keeps the last records the collect sinks of one job received: at
// most maxRecords records and maxBytes bytes of values, oldest dropped
// first. Safe for concurrent use by every sink subtask and readers.
type tail struct {
	maxRecords, maxBytes int

	mu    sync.Mutex
	ring  []outRecord // circular, len maxRecords once full
	head  int         // index of the oldest record
	n     int
	bytes int
	total int64
}

type outRecord struct {
	sink    string
	subtask int
	value   []byte // msgpack; nil when the record was larger than maxBytes
	size    int
}

func newTail(maxRecords, maxBytes int) *tail {
	return &tail{maxRecords: maxRecords, maxBytes: maxBytes}
}

// push keeps copies of the values of count records of batch.
func (t *tail) push(sink string, subtask int, batch []byte, count int) error {
	rd := abi.NewReader(batch, count)
	t.mu.Lock()
	defer t.mu.Unlock()
	for rd.Next() {
		v := rd.Record().Value
		r := outRecord{sink: sink, subtask: subtask, size: len(v)}
		if len(v) <= t.maxBytes {
			r.value = append([]byte(nil), v...)
		}
		t.add(r)
	}
	return rd.Err()
}

func (t *tail) add(r outRecord) {
	t.total++
	for t.n > 0 && (t.n == t.maxRecords || t.bytes+len(r.value) > t.maxBytes) {
		t.bytes -= len(t.ring[t.head].value)
		t.ring[t.head] = outRecord{}
		t.head = (t.head + 1) % t.maxRecords
		t.n--
	}
	if len(t.ring) < t.maxRecords {
		t.ring = append(t.ring, outRecord{})
	}
	t.ring[(t.head+t.n)%t.maxRecords] = r
	t.n++
	t.bytes += len(r.value)
}

// OutputRecord is one record a collect sink received, its value as JSON.
type OutputRecord struct {
	Sink    string          `json:"sink"`
	Subtask int             `json:"subtask"`
	Value   json.RawMessage `json:"value"`
}

// Output is the tail of a job's collect sinks.
type Output struct {
	Job   string `json:"job"`
	Total int64  `json:"total"` // records the collect sinks received
	// Returned is len(Records); Truncated says it is fewer than Total: the
	// answer holds the newest n asked for, and the server keeps only the
	// newest output-records (and output-bytes) of each job.
	Returned  int            `json:"returned"`
	Truncated bool           `json:"truncated"`
	Records   []OutputRecord `json:"records"`
}

// last renders the newest n records (all kept when n <= 0), oldest first.
func (t *tail) last(n int) (records []OutputRecord, total int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if n <= 0 || n > t.n {
		n = t.n
	}
	records = make([]OutputRecord, 0, n)
	for i := t.n - n; i < t.n; i++ {
		r := t.ring[(t.head+i)%t.maxRecords]
		out := OutputRecord{Sink: r.sink, Subtask: r.subtask}
		if r.value == nil {
			out.Value = json.RawMessage(fmt.Sprintf(`{"omitted":"a record of %d bytes, larger than the server's output-bytes"}`, r.size))
		} else if js, err := codec.MsgpackToJSON(nil, r.value); err == nil {
			out.Value = js
		} else {
			msg, _ := jsonout.Marshal(err.Error())
			out.Value = json.RawMessage(`{"unreadable":` + string(msg) + `}`)
		}
		records = append(records, out)
	}
	return records, t.total
}

// Collect is the spec of the collect sink, the one connector of the
// server's own: the server parses tenants' pipelines against the host's
// connectors with it (Connectors), and the engine gets a collectSink for
// it (connectors.Sink).
var Collect = &spec.Connector{
	Name:    "collect",
	Role:    spec.Sink,
	Summary: "keeps the last records of a job for `GET /v1/jobs/{id}/output` (in `host serve` only)",
	Doc: "The records of every collect sink of a job go to one buffer of at most `output-records` records " +
		"and `output-bytes` bytes of values (server settings), oldest dropped first; a record larger than " +
		"`output-bytes` is kept as a note of its size. `GET /v1/jobs/{id}/output` answers the buffer, oldest " +
		"first, each record with its sink and subtask, and the total the sinks received. The buffer is in the " +
		"server's memory, kept as long as the server keeps the ended job (`job-history`).",
	// a replay from a checkpoint keeps again what it sends again
	Guarantee: spec.AtLeastOnce,
	Contained: true,
}

// connectorSet is what tenants' pipelines are parsed against: the
// host's connectors and collect. Those that are not Contained (they touch
// the host's files, streams or network) parse, so that policy refuses
// them in the server's words.
var connectorSet = connector.Set().With(Collect)

// Connectors is the set of connectors host serve parses pipelines
// against (docs/connectors.md is generated from it).
func Connectors() *spec.Set { return connectorSet }

// collectSink is one subtask of a collect sink: it hands every record to
// the job's tail and emits nothing.
type collectSink struct {
	op      string
	subtask int
	t       *tail
}

var _ runtime.Operator = (*collectSink)(nil)

func (c *collectSink) Open(*runtime.OpenContext) error { return nil }

func (c *collectSink) Process(_ int, batch []byte, count int, _ runtime.Collector) error {
	if err := c.t.push(c.op, c.subtask, batch, count); err != nil {
		return fmt.Errorf("sink %q: %w", c.op, err)
	}
	return nil
}

func (c *collectSink) Close(runtime.Collector) error { return nil }
