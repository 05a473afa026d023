//go:build unix

package fleetdevice

import (
	"errors"
	"net"
	"syscall"
	"testing"
)

// unread is how many bytes the server sent that c has not read, without
// waiting: the socket is peeked.
func unread(t testing.TB, c net.Conn) int {
	t.Helper()
	sc, err := c.(syscall.Conn).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var n int
	var perr error
	buf := make([]byte, 64)
	err = sc.Read(func(fd uintptr) bool {
		n, _, perr = syscall.Recvfrom(int(fd), buf, syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	if errors.Is(perr, syscall.EAGAIN) || errors.Is(perr, syscall.EWOULDBLOCK) {
		return 0
	}
	if perr != nil {
		t.Fatal(perr)
	}
	return n
}
