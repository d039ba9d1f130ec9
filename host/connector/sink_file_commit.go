package connector

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/sluicehq/sluice/host/checkpoint"
	"github.com/sluicehq/sluice/host/roots"
)

// The file sink's two-phase commit, as Flink's FileSink, when the job
// checkpoints (Builtin.Checkpointed). A subtask writes its records to a
// hidden in-progress part file, .<name>-<subtask>-<n><ext>.inprogress
// beside the sink's path (out.jsonl: .out-0-0.jsonl.inprogress). When a
// checkpoint's barrier reaches it (SnapshotState) it fsyncs and closes the
// part and hands it over as a committable; when the checkpoint completes
// (NotifyCheckpointComplete) it renames the part to its final name,
// <name>-<subtask>-<n><ext> (out-0-0.jsonl), so a reader never sees a
// record of a checkpoint that did not complete. Committing is idempotent:
// a part already renamed is committed. A restored subtask commits the
// parts of the checkpoint it restores (they were pre-committed, the
// checkpoint completed, the rename may not have happened) and deletes the
// in-progress parts written after it. At the end of its input the sink
// commits what it wrote, as Flink's final checkpoint does.
//
// The state is the committables (one element per pre-committed part not
// yet committed: subtask, part, checkpoint) and, in the union state, each
// subtask's next part number, so that a restored subtask knows, for every
// old subtask, which in-progress parts came after the checkpoint.

type partFiles struct {
	op          string
	dir         *os.Root // the sink's folder
	dirPath     string   // for messages
	stem, ext   string   // out.jsonl: "out", ".jsonl"
	subtask     int
	parallelism int

	next    int      // the next part's number
	cur     *os.File // the part being written, nil between parts
	curPart int
	opened  int    // parts this sink opened (a CSV part after the first repeats the header)
	pending []part // pre-committed, not yet committed, oldest first

	restored, prepared bool
}

// part is one pre-committed part file: its subtask and number, and the
// checkpoint it belongs to.
type part struct {
	subtask, n int
	id         checkpoint.ID
}

func (p *partFiles) inProgress(sub, n int) string {
	return "." + p.stem + "-" + strconv.Itoa(sub) + "-" + strconv.Itoa(n) + p.ext + ".inprogress"
}

func (p *partFiles) final(sub, n int) string {
	return p.stem + "-" + strconv.Itoa(sub) + "-" + strconv.Itoa(n) + p.ext
}

// parsePart reads the subtask and number of a part file's name, and
// whether it is in progress.
func (p *partFiles) parsePart(name string) (sub, n int, inProgress, ok bool) {
	s := name
	if rest, found := strings.CutPrefix(s, "."); found {
		if s, found = strings.CutSuffix(rest, ".inprogress"); !found {
			return 0, 0, false, false
		}
		inProgress = true
	}
	s, found := strings.CutPrefix(s, p.stem+"-")
	if !found {
		return 0, 0, false, false
	}
	if s, found = strings.CutSuffix(s, p.ext); !found {
		return 0, 0, false, false
	}
	a, b, found := strings.Cut(s, "-")
	sub, err1 := strconv.Atoi(a)
	n, err2 := strconv.Atoi(b)
	if !found || err1 != nil || err2 != nil || sub < 0 || n < 0 {
		return 0, 0, false, false
	}
	return sub, n, inProgress, true
}

// openParts opens the folder the parts of the sink at path go in (through
// the roots when there are any), creating it.
func openParts(op, path string, allowed []string, subtask, parallelism int) (*partFiles, error) {
	base := filepath.Base(path)
	ext := filepath.Ext(base)
	if ext == base {
		ext = ""
	}
	p := &partFiles{op: op, dirPath: filepath.Dir(path), stem: strings.TrimSuffix(base, ext), ext: ext,
		subtask: subtask, parallelism: parallelism}
	var err error
	if allowed == nil {
		if err = os.MkdirAll(p.dirPath, 0o755); err == nil {
			p.dir, err = os.OpenRoot(p.dirPath)
		}
		return p, err
	}
	root, rel, err := roots.Resolve(allowed, path)
	if err != nil {
		return nil, err
	}
	r, err := os.OpenRoot(root)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	if d := filepath.Dir(rel); d != "." {
		if err := r.MkdirAll(d, 0o755); err != nil {
			return nil, err
		}
	}
	p.dir, err = r.OpenRoot(filepath.Dir(rel))
	return p, err
}

// names lists the folder's entries.
func (p *partFiles) names() ([]string, error) {
	d, err := p.dir.Open(".")
	if err != nil {
		return nil, err
	}
	defer d.Close()
	return d.Readdirnames(-1)
}

// prepare, on a fresh start (no restore), removes this subtask's parts of
// an earlier run, as the sink without checkpoints truncates its file.
func (p *partFiles) prepare() error {
	if p.prepared {
		return nil
	}
	p.prepared = true
	if p.restored {
		return nil
	}
	names, err := p.names()
	if err != nil {
		return p.fail("listing", p.dirPath, err)
	}
	for _, name := range names {
		if sub, _, _, ok := p.parsePart(name); ok && sub == p.subtask {
			if err := p.dir.Remove(name); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return p.fail("removing", name, err)
			}
		}
	}
	return nil
}

func (p *partFiles) fail(doing, name string, err error) error {
	return fmt.Errorf("sink %q: %s %s: %w", p.op, doing, filepath.Join(p.dirPath, name), unwrapPath(err))
}

// file returns the part being written, opening a new one if none is;
// fresh says it was just opened.
func (p *partFiles) file() (f *os.File, fresh bool, err error) {
	if p.cur != nil {
		return p.cur, false, nil
	}
	if err := p.prepare(); err != nil {
		return nil, false, err
	}
	name := p.inProgress(p.subtask, p.next)
	f, err = p.dir.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, false, p.fail("creating", name, err)
	}
	p.cur, p.curPart = f, p.next
	p.next++
	p.opened++
	return f, true, nil
}

// preCommit closes the part being written, if any, as part of checkpoint id.
func (p *partFiles) preCommit(id checkpoint.ID) error {
	if err := p.prepare(); err != nil {
		return err
	}
	if p.cur == nil {
		return nil
	}
	f, name := p.cur, p.inProgress(p.subtask, p.curPart)
	p.cur = nil
	err := f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return p.fail("closing", name, err)
	}
	p.pending = append(p.pending, part{subtask: p.subtask, n: p.curPart, id: id})
	return nil
}

// snapshot is the sink's state for checkpoint id: every part pre-committed
// and not committed yet, and this subtask's next part number.
func (p *partFiles) snapshot(id checkpoint.ID) (checkpoint.SubtaskState, error) {
	if err := p.preCommit(id); err != nil {
		return checkpoint.SubtaskState{}, err
	}
	st := checkpoint.SubtaskState{Union: [][]byte{appendUvarints(nil, uint64(p.subtask), uint64(p.next))}}
	for _, c := range p.pending {
		st.Committables = append(st.Committables, appendUvarints(nil, uint64(c.subtask), uint64(c.n), uint64(c.id)))
	}
	return st, nil
}

// commit renames the parts pre-committed for checkpoints up to id.
func (p *partFiles) commit(id checkpoint.ID) error {
	keep := p.pending[:0]
	done := false
	for _, c := range p.pending {
		if c.id > id {
			keep = append(keep, c)
			continue
		}
		if err := p.commitPart(c.subtask, c.n); err != nil {
			return err
		}
		done = true
	}
	p.pending = keep
	if done {
		return p.syncDir()
	}
	return nil
}

// commitPart renames one part to its final name; a part already renamed
// is committed.
func (p *partFiles) commitPart(sub, n int) error {
	from, to := p.inProgress(sub, n), p.final(sub, n)
	err := p.dir.Rename(from, to)
	if err == nil {
		return nil
	}
	_, serr := p.dir.Stat(to)
	_, ierr := p.dir.Stat(from)
	switch {
	case serr == nil && errors.Is(ierr, fs.ErrNotExist):
		return nil // committed before (a restore commits again)
	case errors.Is(serr, fs.ErrNotExist) && errors.Is(ierr, fs.ErrNotExist):
		return fmt.Errorf("sink %q: cannot commit part %s: neither it nor %s exists in %s: the checkpoint's output was removed or moved since",
			p.op, from, to, p.dirPath)
	}
	return p.fail("committing", from, err)
}

func (p *partFiles) syncDir() error {
	d, err := p.dir.Open(".")
	if err != nil {
		return p.fail("syncing", ".", err)
	}
	err = d.Sync()
	d.Close()
	if err != nil && !errors.Is(err, fs.ErrInvalid) {
		return p.fail("syncing", ".", err)
	}
	return nil
}

// restore commits the restored committables, removes the in-progress
// parts written after the checkpoint by the old subtasks this subtask
// stands for (old subtask s goes to s % parallelism), and continues the
// part numbers above this subtask's existing parts.
func (p *partFiles) restore(r checkpoint.Restore) error {
	p.restored = true
	for i, b := range r.Committables {
		v, err := readUvarints(b, 3)
		if err != nil {
			return fmt.Errorf("sink %q: restoring committable %d: %w", p.op, i, err)
		}
		if err := p.commitPart(int(v[0]), int(v[1])); err != nil {
			return err
		}
	}
	nextOf := map[int]int{} // old subtask -> its next part at the checkpoint
	for i, b := range r.Union {
		v, err := readUvarints(b, 2)
		if err != nil {
			return fmt.Errorf("sink %q: restoring the part numbers, element %d: %w", p.op, i, err)
		}
		nextOf[int(v[0])] = int(v[1])
	}
	names, err := p.names()
	if err != nil {
		return p.fail("listing", p.dirPath, err)
	}
	for _, name := range names {
		sub, n, inProgress, ok := p.parsePart(name)
		if !ok || !inProgress || sub%p.parallelism != p.subtask {
			continue
		}
		if next, known := nextOf[sub]; known && n >= next {
			if err := p.dir.Remove(name); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return p.fail("removing", name, err)
			}
		}
	}
	if names, err = p.names(); err != nil {
		return p.fail("listing", p.dirPath, err)
	}
	p.next = nextOf[p.subtask]
	for _, name := range names {
		if sub, n, _, ok := p.parsePart(name); ok && sub == p.subtask && n >= p.next {
			p.next = n + 1
		}
	}
	return p.syncDir()
}

// finish commits everything at the end of the input.
func (p *partFiles) finish() error {
	if err := p.preCommit(^checkpoint.ID(0)); err != nil {
		return err
	}
	return p.commit(^checkpoint.ID(0))
}

// abandon closes the part being written without committing it (the job is
// torn down: a restore deletes it).
func (p *partFiles) abandon() {
	if p.cur != nil {
		p.cur.Close()
		p.cur = nil
	}
}

// appendUvarints and readUvarints encode the file connectors' states: a
// version byte (1), then the numbers as uvarints.
func appendUvarints(b []byte, vs ...uint64) []byte {
	b = append(b, 1) // version
	for _, v := range vs {
		b = binary.AppendUvarint(b, v)
	}
	return b
}

func readUvarints(b []byte, n int) ([]uint64, error) {
	if len(b) == 0 || b[0] != 1 {
		return nil, errors.New("not a file connector state of this version")
	}
	b = b[1:]
	out := make([]uint64, n)
	for i := range out {
		v, k := binary.Uvarint(b)
		if k <= 0 || v > 1<<62 {
			return nil, errors.New("a truncated or out-of-range file connector state")
		}
		out[i], b = v, b[k:]
	}
	if len(b) != 0 {
		return nil, errors.New("a file connector state with trailing bytes")
	}
	return out, nil
}
