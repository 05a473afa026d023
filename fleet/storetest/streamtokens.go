package storetest

import (
	"crypto/sha256"
	"sync"
	"testing"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/matryer/is"
)

// RunStreamTokens checks the stream tokens area (fleet.StreamTokenStore):
// a token is taken once, never after it expires, by one of any number of
// concurrent takers; purges remove expired tokens only.
func RunStreamTokens(t *testing.T, open func(t *testing.T) fleet.Store) {
	run(t, open, []namedTest{
		{"StreamTokenTakenOnce", testStreamTokenTakenOnce},
		{"StreamTokenExpires", testStreamTokenExpires},
		{"StreamTokenTakenOnceUnderConcurrency", testStreamTokenConcurrent},
		{"StreamTokenPurge", testStreamTokenPurge},
	})
}

func newStreamToken(s string, created time.Time) fleet.StreamToken {
	return fleet.StreamToken{Hash: sha256.Sum256([]byte(s)), KeyID: fleet.NewID(fleet.PrefixKey),
		AccountID: fleet.NewID(fleet.PrefixAccount), CreatedAt: created, ExpiresAt: created.Add(fleet.StreamTokenTTL)}
}

func testStreamTokenTakenOnce(t *testing.T, s fleet.Store) {
	is := is.New(t)
	tok := newStreamToken("a", T0)
	is.NoErr(s.CreateStreamToken(ctx, tok))
	other := newStreamToken("b", T0)
	is.NoErr(s.CreateStreamToken(ctx, other))
	is.Equal(code(s.CreateStreamToken(ctx, newStreamToken("a", T0.Add(time.Second)))), fleet.CodeConflict) // same hash

	_, err := s.TakeStreamToken(ctx, sha256.Sum256([]byte("unknown")), T0)
	is.Equal(code(err), fleet.CodeNotFound) // unknown

	got, err := s.TakeStreamToken(ctx, tok.Hash, T0.Add(time.Second))
	is.NoErr(err)
	is.Equal(got.Hash, tok.Hash)
	is.Equal(got.KeyID, tok.KeyID)
	is.Equal(got.AccountID, tok.AccountID)
	is.True(got.CreatedAt.Equal(tok.CreatedAt))
	is.True(got.ExpiresAt.Equal(tok.ExpiresAt))

	_, err = s.TakeStreamToken(ctx, tok.Hash, T0.Add(2*time.Second))
	is.Equal(code(err), fleet.CodeNotFound) // spent by the first take

	got, err = s.TakeStreamToken(ctx, other.Hash, T0.Add(time.Second))
	is.NoErr(err) // another token is untouched
	is.Equal(got.KeyID, other.KeyID)
}

func testStreamTokenExpires(t *testing.T, s fleet.Store) {
	is := is.New(t)
	tok := newStreamToken("a", T0)
	is.NoErr(s.CreateStreamToken(ctx, tok))
	_, err := s.TakeStreamToken(ctx, tok.Hash, tok.ExpiresAt)
	is.Equal(code(err), fleet.CodeNotFound) // expired at ExpiresAt
	_, err = s.TakeStreamToken(ctx, tok.Hash, T0)
	is.Equal(code(err), fleet.CodeNotFound) // and removed: not usable even by a clock that goes back

	last := newStreamToken("b", T0)
	is.NoErr(s.CreateStreamToken(ctx, last))
	_, err = s.TakeStreamToken(ctx, last.Hash, last.ExpiresAt.Add(-time.Microsecond))
	is.NoErr(err) // usable to the last moment
}

func testStreamTokenConcurrent(t *testing.T, s fleet.Store) {
	is := is.New(t)
	tok := newStreamToken("a", T0)
	is.NoErr(s.CreateStreamToken(ctx, tok))
	const n = 16
	var wg sync.WaitGroup
	var mu sync.Mutex
	taken, notFound := 0, 0
	start := make(chan struct{})
	for range n {
		wg.Go(func() {
			<-start
			_, err := s.TakeStreamToken(ctx, tok.Hash, T0.Add(time.Second))
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				taken++
			case code(err) == fleet.CodeNotFound:
				notFound++
			default:
				t.Errorf("take: %v", err)
			}
		})
	}
	close(start)
	wg.Wait()
	is.Equal(taken, 1) // exactly one taker gets the token
	is.Equal(notFound, n-1)
}

func testStreamTokenPurge(t *testing.T, s fleet.Store) {
	is := is.New(t)
	old := newStreamToken("old", T0)
	edge := newStreamToken("edge", T0.Add(time.Minute))
	fresh := newStreamToken("fresh", T0.Add(5*time.Minute))
	for _, tok := range []fleet.StreamToken{old, edge, fresh} {
		is.NoErr(s.CreateStreamToken(ctx, tok))
	}
	n, err := s.PurgeStreamTokens(ctx, edge.ExpiresAt)
	is.NoErr(err)
	is.Equal(n, 1) // only the token that expired before the time
	_, err = s.TakeStreamToken(ctx, old.Hash, T0)
	is.Equal(code(err), fleet.CodeNotFound) // purged
	_, err = s.TakeStreamToken(ctx, edge.Hash, edge.CreatedAt)
	is.NoErr(err) // expiring exactly then: kept
	_, err = s.TakeStreamToken(ctx, fresh.Hash, fresh.CreatedAt)
	is.NoErr(err)
}
