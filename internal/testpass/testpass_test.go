package testpass_test

import (
	"strings"
	"testing"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/internal/testpass"
	"github.com/matryer/is"
)

// The cheap hashes are fleet's default form: fleet's default verifies
// them, and they are salted.
func TestCheapHashesVerifyAsFleetsDefault(t *testing.T) {
	is := is.New(t)
	h := testpass.Cheap().Hash("a password")
	is.True(strings.HasPrefix(h, "$pbkdf2-sha256$i=1$"))
	is.True(fleet.VerifyPassword(h, "a password"))
	is.True(!fleet.VerifyPassword(h, "another"))
	is.True(testpass.Cheap().Verify(h, "a password"))
	is.True(testpass.Cheap().Hash("a password") != h)
	is.Equal(testpass.HashWithSalt("x", []byte("0123456789abcdef")), testpass.HashWithSalt("x", []byte("0123456789abcdef")))
}
