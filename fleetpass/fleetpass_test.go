package fleetpass

import (
	"fmt"
	"strings"
	"testing"

	"github.com/matryer/is"
	"golang.org/x/crypto/argon2"
)

const goodPassword = "tawny-owl-rides-at-dawn"

// hashWith is an argon2id hash of password with the parameters given, in
// PHC form.
func hashWith(password string, m, t uint32, p uint8) string {
	salt := []byte("0123456789abcdef")
	sum := argon2.IDKey([]byte(password), salt, t, m, p, 32)
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s", argon2.Version, m, t, p, b64.EncodeToString(salt), b64.EncodeToString(sum))
}

func TestHashAndVerify(t *testing.T) {
	is := is.New(t)
	h := Argon2id().Hash(goodPassword)
	is.True(strings.HasPrefix(h, "$argon2id$v=19$m=19456,t=2,p=1$")) // OWASP parameters
	is.True(!strings.Contains(h, goodPassword))
	is.True(Argon2id().Verify(h, goodPassword))
	is.True(!Argon2id().Verify(h, goodPassword+"x"))
	is.True(Argon2id().Hash(goodPassword) != h) // salted
	is.True(!Argon2id().Verify("$argon2id$garbage", goodPassword))
	is.True(Argon2id().Verify(hashWith(goodPassword, 64, 1, 1), goodPassword)) // the parameters the hash names
}

// A hash that asks more of a verification than the bounds allow (memory,
// passes, threads), of another algorithm or version, or malformed, never
// matches, though each but the malformed is the password's right hash
// with what it names.
// A hash stored before this package existed (made by fleet, argon2id with
// OWASP's parameters) still verifies: the format and parameters are the
// same.
func TestStoredHashesStillVerify(t *testing.T) {
	is := is.New(t)
	const stored = "$argon2id$v=19$m=19456,t=2,p=1$D2iU12s3uGNtMc3DoU7PKg$JnNhguEys945As99WTXFw40KhyOz/i3+z/0iK+fDDKo"
	is.True(Argon2id().Verify(stored, goodPassword))
	is.True(!Argon2id().Verify(stored, goodPassword+"!"))
	var zero Hasher
	is.True(zero.Verify(stored, goodPassword)) // the zero value works
}

func TestVerifyRefusesWhatItMustNot(t *testing.T) {
	ok := hashWith(goodPassword, 64, 1, 1)
	for name, h := range map[string]string{
		"memory over 64 MiB": hashWith(goodPassword, maxArgonMemory+1, 1, 1),
		"passes over 10":     hashWith(goodPassword, 64, maxArgonTime+1, 1),
		"threads over 4":     hashWith(goodPassword, 64, 1, maxArgonThreads+1),
		"argon2i":            strings.Replace(ok, "$argon2id$", "$argon2i$", 1),
		"version 16":         strings.Replace(ok, "$v=19$", "$v=16$", 1),
		"salt not base64":    strings.Replace(ok, "$MDEy", "$!!!!", 1),
		"no hash":            ok[:strings.LastIndex(ok, "$")+1],
		"a part short":       ok[strings.Index(ok[1:], "$")+1:],
	} {
		t.Run(name, func(t *testing.T) {
			is := is.New(t)
			is.True(h != ok) // the case changes the hash
			is.True(!Argon2id().Verify(h, goodPassword))
		})
	}
}

// BenchmarkPasswordHash is the cost of one sign-in's argon2id (OWASP
// parameters): what a password guess costs the server, by design.
func BenchmarkPasswordHash(b *testing.B) {
	h := Argon2id().Hash(goodPassword)
	for b.Loop() {
		if !Argon2id().Verify(h, goodPassword) {
			b.Fatal("no match")
		}
	}
}
