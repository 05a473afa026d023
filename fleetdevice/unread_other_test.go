//go:build !unix

package fleetdevice

import (
	"errors"
	"net"
	"os"
	"testing"
	"time"
)

// unread is how many bytes the server sent that c has not read: where
// the socket cannot be peeked, what a short read finds (and consumes).
func unread(t testing.TB, c net.Conn) int {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
	defer c.SetReadDeadline(time.Now().Add(testDeadline))
	b := make([]byte, 64)
	n, err := c.Read(b)
	if err != nil && !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatal(err)
	}
	return n
}
