//go:build !linux

package server

// lowerPriority does nothing where threads have no priority of their own.
func lowerPriority(int) {}

// threadNice reports that thread priorities are not known here.
func threadNice() (int, bool) { return 0, false }
