package pebblestate

import (
	"github.com/cockroachdb/pebble/v2/vfs"
)

// noSyncFS is the file system of a subtask's database: the OS's, with
// every fsync dropped. The database is never opened again after a crash
// (a run starts empty or from a checkpoint), so nothing it writes needs
// to be durable; what must be durable is the checkpoint storage's copy,
// which host/checkpoint fsyncs. An fsync costs milliseconds on the
// synchronous part of a checkpoint (the memtable's flush, the
// checkpoint's MANIFEST and OPTIONS) and in every flush and compaction.
type noSyncFS struct{ vfs.FS }

type noSyncFile struct{ vfs.File }

func (noSyncFile) Sync() error                             { return nil }
func (noSyncFile) SyncData() error                         { return nil }
func (noSyncFile) SyncTo(int64) (fullSync bool, err error) { return false, nil }

func wrapFile(f vfs.File, err error) (vfs.File, error) {
	if err != nil {
		return nil, err
	}
	return noSyncFile{f}, nil
}

func (fs noSyncFS) Create(name string, c vfs.DiskWriteCategory) (vfs.File, error) {
	return wrapFile(fs.FS.Create(name, c))
}

func (fs noSyncFS) OpenReadWrite(name string, c vfs.DiskWriteCategory, opts ...vfs.OpenOption) (vfs.File, error) {
	return wrapFile(fs.FS.OpenReadWrite(name, c, opts...))
}

func (fs noSyncFS) OpenDir(name string) (vfs.File, error) { return wrapFile(fs.FS.OpenDir(name)) }

func (fs noSyncFS) ReuseForWrite(oldname, newname string, c vfs.DiskWriteCategory) (vfs.File, error) {
	return wrapFile(fs.FS.ReuseForWrite(oldname, newname, c))
}
