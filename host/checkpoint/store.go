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

// Retain applies `retain: n` to jobDir: it keeps the n newest completed
// checkpoints (those whose _metadata reads) and every id in protect (the
// checkpoint the job was restored from, those in progress), and removes
// the other completed checkpoints and every other chk-<id> directory older
// than the oldest one kept (unfinished or broken). Savepoints live
// elsewhere and are never touched. It returns the directories removed.
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
	for _, id := range ids {
		if _, err := Open(filepath.Join(jobDir, checkpointDirName(id))); err != nil {
			broken = append(broken, id)
			continue
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
	var removed []string
	for _, id := range remove {
		if slices.Contains(protect, id) {
			continue
		}
		dir := filepath.Join(jobDir, checkpointDirName(id))
		if err := os.RemoveAll(dir); err != nil {
			return removed, fmt.Errorf("checkpoint storage: removing %s: %w", dir, err)
		}
		removed = append(removed, dir)
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
