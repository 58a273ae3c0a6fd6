//go:build !unix

package trace

import "os"

func openFile(path string, flag int, perm uint32) (*os.File, error) {
	return os.OpenFile(path, flag, os.FileMode(perm))
}

// ReadSmallFile reads a small file.
func ReadSmallFile(path string) ([]byte, error) { return os.ReadFile(path) }

// fileSizeLimit: no file size limit is known on this system.
var fileSizeLimit = func() int64 { return -1 }

// fileID: files cannot be identified on this system.
type fileID struct{}

func identify(*os.File) (fileID, bool) { return fileID{}, false }

func (fileID) same() bool { return true }

// poolID is a pooled file's identity (filepool.go): here its FileInfo,
// which os.SameFile compares.
type poolID struct{ fi os.FileInfo }

func poolIDOf(st os.FileInfo) poolID { return poolID{st} }

func (id poolID) is(st os.FileInfo) bool { return os.SameFile(id.fi, st) }

// openFileSoftLimit: no such limit here.
func openFileSoftLimit() (int, bool) { return 0, false }
