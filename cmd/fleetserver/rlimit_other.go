//go:build !unix

package main

// raiseOpenFiles does nothing where there is no RLIMIT_NOFILE.
func raiseOpenFiles() uint64 { return 0 }
