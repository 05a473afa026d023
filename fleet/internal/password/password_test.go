package password

import (
	"context"
	"encoding/hex"
	"strings"
	"sync"
	"testing"

	"github.com/matryer/is"
)

const goodPassword = "tawny-owl-rides-at-dawn"

func TestHashAndVerify(t *testing.T) {
	is := is.New(t)
	h := Hash(goodPassword)
	is.True(strings.HasPrefix(h, "$pbkdf2-sha256$i=600000$")) // OWASP's count, named in the hash
	is.True(!strings.Contains(h, goodPassword))
	is.True(Verify(h, goodPassword))
	is.True(!Verify(h, goodPassword+"x"))
	is.True(Hash(goodPassword) != h) // salted
	is.True(!Verify("$pbkdf2-sha256$garbage", goodPassword))
	is.True(Verify(hashWith(goodPassword, 1000), goodPassword)) // the iterations the hash names
}

// A hash of a published test vector of PBKDF2-HMAC-SHA256 ("password",
// salt "salt", one iteration) verifies: the format is the standard
// algorithm's output, and it does not drift.
func TestKnownVectorVerifies(t *testing.T) {
	is := is.New(t)
	sum, err := hex.DecodeString("120fb6cffcf8b32c43e7225256c4f837a86548c92ccc35480805987cb70be17b")
	is.NoErr(err)
	h := "$pbkdf2-sha256$i=1$" + b64.EncodeToString([]byte("salt")) + "$" + b64.EncodeToString(sum)
	is.True(Verify(h, "password"))
	is.True(!Verify(h, "Password"))
}

func TestVerifyRefusesWhatItMustNot(t *testing.T) {
	ok := hashWith(goodPassword, 1000)
	parts := strings.Split(ok, "$")
	for name, h := range map[string]string{
		"iterations over the most": strings.Replace(ok, "$i=1000$", "$i=6000001$", 1),
		"no iterations":            strings.Replace(ok, "$i=1000$", "$i=0$", 1),
		"iterations not a number":  strings.Replace(ok, "$i=1000$", "$i=1000x$", 1),
		"another hash function":    strings.Replace(ok, "$pbkdf2-sha256$", "$pbkdf2-sha1$", 1),
		"argon2id":                 "$argon2id$v=19$m=19456,t=2,p=1$" + parts[3] + "$" + parts[4],
		"salt not base64":          strings.Replace(ok, "$"+parts[3]+"$", "$!!!!$", 1),
		"no hash":                  ok[:strings.LastIndex(ok, "$")+1],
		"a part short":             ok[strings.Index(ok[1:], "$")+1:],
		"text before":              "x" + ok,
	} {
		t.Run(name, func(t *testing.T) {
			is := is.New(t)
			is.True(h != ok) // the case changes the hash
			is.True(!Verify(h, goodPassword))
		})
	}
	is := is.New(t)
	is.True(IsArgon2id("$argon2id$v=19$m=19456,t=2,p=1$c2FsdA$aGFzaA"))
	is.True(!IsArgon2id(ok))
}

// No more than n hashes run at once; one that finds every slot taken waits
// at most Wait, or until its context ends, and then does not run.
func TestSlots(t *testing.T) {
	is := is.New(t)
	const n = 3
	h := NewSlots(n, 0)
	started := make(chan int, n)
	release := make(chan struct{})
	h.Started = func(running int) { started <- running }
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() { is.True(h.Do(context.Background(), func() { <-release })) })
	}
	seen := map[int]bool{}
	for range n {
		seen[<-started] = true
	}
	is.Equal(seen, map[int]bool{1: true, 2: true, 3: true}) // counted as each starts
	ran := false
	is.True(!h.Do(context.Background(), func() { ran = true })) // every slot held: no wait
	h.Wait = 1 << 62
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	is.True(!h.Do(ctx, func() { ran = true })) // a context that ended
	is.True(!ran)
	close(release)
	wg.Wait()
	is.True(h.Do(context.Background(), func() { ran = true })) // a slot free again
	is.True(ran)
	is.Equal(<-started, 1)
}

// BenchmarkPasswordHash is the cost of one sign-in's PBKDF2 (OWASP's
// count): what a password guess costs the server, by design.
func BenchmarkPasswordHash(b *testing.B) {
	h := Hash(goodPassword)
	for b.Loop() {
		if !Verify(h, goodPassword) {
			b.Fatal("no match")
		}
	}
}
