package server

import "golang.org/x/sys/unix"

// lowerPriority raises the calling thread's nice value by nice (Linux
// keeps a nice value per thread). Raising it needs no privilege; an error
// leaves the thread as it was.
func lowerPriority(nice int) {
	tid := unix.Gettid()
	cur, err := unix.Getpriority(unix.PRIO_PROCESS, tid)
	if err != nil {
		return
	}
	// The raw system call returns 20 - nice.
	_ = unix.Setpriority(unix.PRIO_PROCESS, tid, min(19, 20-cur+nice))
}

// threadNice is the calling thread's nice value (for tests).
func threadNice() (int, bool) {
	cur, err := unix.Getpriority(unix.PRIO_PROCESS, unix.Gettid())
	if err != nil {
		return 0, false
	}
	return 20 - cur, true
}
