//go:build unix

package main

import "syscall"

// raiseOpenFiles raises the soft limit of open files to the hard one, so
// that thousands of device connections (or, for load, simulated devices)
// fit, and returns the limit now in force (0 when it cannot be read).
func raiseOpenFiles() uint64 {
	var l syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l); err != nil {
		return 0
	}
	if l.Cur < l.Max {
		want := l
		want.Cur = l.Max
		if syscall.Setrlimit(syscall.RLIMIT_NOFILE, &want) == nil {
			l = want
		}
	}
	return uint64(l.Cur)
}
