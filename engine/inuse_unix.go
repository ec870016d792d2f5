//go:build unix

package engine

import (
	"os"
	"path/filepath"
	"syscall"
)

// inUse reports whether a process holds the index at dir open: every
// reader holds a shared lock on its store file.
func inUse(dir string) bool {
	f, err := os.OpenFile(filepath.Join(dir, "store", "root.bolt"), os.O_RDONLY, 0)
	if err != nil {
		return false
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		return true
	}
	syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	return false
}
