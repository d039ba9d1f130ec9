package checkpoint

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Skipped is a checkpoint Latest passed over, and why.
type Skipped struct {
	Path string
	Err  error
}

// JobDir is the directory the checkpoints of job are written in.
func JobDir(storage, job string) string { return filepath.Join(storage, job) }

// listCheckpoints returns the ids of the chk-<id> directories in jobDir,
// newest first. Anything else in jobDir is left alone.
func listCheckpoints(jobDir string) ([]ID, error) {
	entries, err := os.ReadDir(jobDir)
	if err != nil {
		return nil, fmt.Errorf("checkpoint storage: %w", err)
	}
	var ids []ID
	for _, e := range entries {
		if id, ok := parseCheckpointDir(e.Name()); ok && e.IsDir() {
			ids = append(ids, id)
		}
	}
	slices.SortFunc(ids, func(a, b ID) int { return -compareID(a, b) })
	return ids, nil
}

func compareID(a, b ID) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// parseCheckpointDir reads the id of a directory named chk-<id>, written as
// checkpointDirName writes it (no sign, no leading zero).
func parseCheckpointDir(name string) (ID, bool) {
	s, ok := strings.CutPrefix(name, "chk-")
	if !ok || s == "" || s[0] == '0' {
		return 0, false
	}
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return 0, false
	}
	return ID(n), true
}

// Latest returns the newest completed checkpoint in jobDir
// (<storage>/<job>) that is whole: its _metadata reads and every state file
// has the size, header and checksums it says (Verify). Newer directories
// it passed over are returned with the reason: unfinished (no _metadata),
// truncated, corrupted, foreign. With none usable the error wraps
// ErrNoCheckpoint and says what was skipped.
func Latest(jobDir string) (*Reader, []Skipped, error) {
	ids, err := listCheckpoints(jobDir)
	if err != nil {
		return nil, nil, err
	}
	var skipped []Skipped
	for _, id := range ids {
		dir := filepath.Join(jobDir, checkpointDirName(id))
		if pruned(dir) {
			continue // files a newer checkpoint references, no checkpoint
		}
		r, err := Open(dir)
		if err == nil && (r.Meta.ID != id || r.Meta.Kind != KindCheckpoint) {
			err = fmt.Errorf("%s: %w: its metadata is for %s %d", dir, ErrCorrupt, r.Meta.Kind, r.Meta.ID)
		}
		if err == nil {
			err = r.Verify()
		}
		if err == nil {
			return r, skipped, nil
		}
		skipped = append(skipped, Skipped{Path: dir, Err: err})
	}
	var why strings.Builder
	for _, s := range skipped {
		why.WriteString("; skipped " + s.Err.Error())
	}
	return nil, skipped, fmt.Errorf("%s: %w%s", jobDir, ErrNoCheckpoint, why.String())
}

// NextID is the first checkpoint id above every chk-<id> directory in
// jobDir, complete or not (1 when there is none): a job restored from an
// older checkpoint than the newest directory continues above it, so it
// never writes into a directory a crash or a corruption left behind.
func NextID(jobDir string) (ID, error) {
	ids, err := listCheckpoints(jobDir)
	if errors.Is(err, fs.ErrNotExist) {
		return 1, nil
	}
	if err != nil {
		return 0, err
	}
	if len(ids) == 0 {
		return 1, nil
	}
	return ids[0] + 1, nil
}

// prunedFile marks a checkpoint directory Retain removed but for the state
// files newer checkpoints still reference: it is no checkpoint any more.
const prunedFile = "_pruned"

func pruned(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, prunedFile))
	return err == nil
}

// Retain applies `retain: n` to jobDir: it keeps the n newest completed
// checkpoints (those whose _metadata reads) and every id in protect (the
// checkpoint the job was restored from, those in progress), and removes
// the other completed checkpoints and every other chk-<id> directory older
// than the oldest one kept (unfinished or broken). Savepoints live
// elsewhere and are never touched. It returns the directories removed.
//
// The state files of an incremental checkpoint's chains may lie in older
// checkpoints (format 2): Retain counts the references to each file from
// every checkpoint it keeps (their _metadata; an unfinished one's _refs),
// and of a directory it removes it keeps the files still referenced: the
// directory is then marked pruned (no _metadata, a _pruned file), is no
// checkpoint, and goes once nothing references its files. The counts are
// made from the metadata each time, so no crash can leave them wrong.
func Retain(jobDir string, n int, protect ...ID) ([]string, error) {
	if n < 1 {
		return nil, fmt.Errorf("checkpoint storage: retain %d must be at least 1", n)
	}
	ids, err := listCheckpoints(jobDir)
	if err != nil {
		return nil, err
	}
	kept := 0
	var oldestKept ID
	remove := []ID{}
	var broken []ID
	refs := map[string]int{} // chk-<id>/<file> -> references from the checkpoints kept
	count := func(id ID, m *Metadata) {
		if m == nil {
			b, err := os.ReadFile(filepath.Join(jobDir, checkpointDirName(id), refsFile))
			if err == nil {
				for _, r := range strings.Split(strings.TrimSpace(string(b)), "\n") {
					refs[r]++
				}
			}
			return
		}
		for _, om := range m.Operators {
			for _, s := range om.Subtasks {
				for _, ch := range s.Chains {
					for _, l := range ch {
						if l.Checkpoint != id && l.Length > 0 { // a zero-length link reads nothing
							refs[refName(l.Checkpoint, l.File)]++
						}
					}
				}
			}
		}
	}
	var prunedDirs []ID
	for _, id := range ids {
		dir := filepath.Join(jobDir, checkpointDirName(id))
		if pruned(dir) {
			prunedDirs = append(prunedDirs, id)
			continue
		}
		r, err := Open(dir)
		if err != nil {
			broken = append(broken, id)
			if slices.Contains(protect, id) {
				count(id, nil) // in progress: what its written states reference
			}
			continue
		}
		if kept < n || slices.Contains(protect, id) {
			count(id, r.Meta)
		}
		if kept < n {
			kept++
			oldestKept = id
			continue
		}
		remove = append(remove, id)
	}
	for _, id := range broken {
		if kept > 0 && id < oldestKept {
			remove = append(remove, id)
		}
	}
	remove = append(remove, prunedDirs...)
	var removed []string
	for _, id := range remove {
		if slices.Contains(protect, id) {
			continue
		}
		dir := filepath.Join(jobDir, checkpointDirName(id))
		gone, err := prune(dir, id, refs)
		if err != nil {
			return removed, fmt.Errorf("checkpoint storage: removing %s: %w", dir, err)
		}
		if gone {
			removed = append(removed, dir)
		}
	}
	if len(removed) > 0 {
		if err := syncDir(jobDir); err != nil {
			return removed, fmt.Errorf("checkpoint storage: %w", err)
		}
	}
	if err := sweepShared(jobDir); err != nil { // native.go
		return removed, fmt.Errorf("checkpoint storage: removing unused shared files: %w", err)
	}
	slices.Sort(removed)
	return removed, nil
}

// prune removes checkpoint directory dir (of id) but for the files refs
// counts: with none it removes the whole directory (gone), else it marks
// it pruned first, then removes _metadata and every other file.
func prune(dir string, id ID, refs map[string]int) (gone bool, err error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return false, err
	}
	var keep []string
	for _, e := range entries {
		if refs[refName(id, e.Name())] > 0 {
			keep = append(keep, e.Name())
		}
	}
	if len(keep) == 0 {
		return true, os.RemoveAll(dir)
	}
	if !pruned(dir) {
		if err := writeFileSync(filepath.Join(dir, prunedFile), []byte(strings.Join(keep, "\n")+"\n")); err != nil {
			return false, err
		}
		if err := syncDir(dir); err != nil {
			return false, err
		}
	}
	for _, e := range entries {
		if e.Name() != prunedFile && !slices.Contains(keep, e.Name()) {
			if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
				return false, err
			}
		}
	}
	return false, syncDir(dir)
}
