package fleethttp

import (
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/matryer/is"
)

// TestSendErrorsTellNothingOfTheNetwork: a delivery whose host turned out
// not to resolve and one whose host resolved to a forbidden address record
// the same error, so an endpoint's owner cannot use deliveries (after a
// DNS change) to learn which internal names resolve.
func TestSendErrorsTellNothingOfTheNetwork(t *testing.T) {
	is := is.New(t)
	forbidden := describeSendError(&net.OpError{Op: "dial", Err: fmt.Errorf("dial: %w", errForbiddenAddr)}, time.Second)
	unresolved := describeSendError(&net.OpError{Op: "dial", Err: &net.DNSError{Err: "no such host", Name: "gone.example.com", IsNotFound: true}}, time.Second)
	is.Equal(forbidden, unresolved)
	is.Equal(forbidden, "The endpoint's host does not resolve to a public address.")
}
