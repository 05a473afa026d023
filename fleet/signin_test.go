package fleet_test

import (
	"context"
	"fmt"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/fleetpass"
	"github.com/fleetkit/fleetapi/internal/testclock"
	"github.com/fleetkit/fleetapi/internal/testpass"
	"github.com/matryer/is"
)

// cheapHash is a one-iteration hash of password in the default hasher's
// form (testpass), for tests that run many verifications:
// VerifyPassword follows the iterations a hash names.
func cheapHash(password string) string {
	return testpass.HashWithSalt(password, []byte("0123456789abcdef"))
}

// addCheapUsers stores users of account a with cheap password hashes of
// goodPassword, straight into the store.
func addCheapUsers(t testing.TB, svc *fleet.Service, a fleet.Account, emails ...string) {
	t.Helper()
	h := cheapHash(goodPassword)
	err := svc.Store().Update(context.Background(), func(tx fleet.Tx) error {
		for _, e := range emails {
			if err := tx.CreateUser(fleet.User{ID: fleet.NewID(fleet.PrefixUser), AccountID: a.ID, Email: e, Role: fleet.RoleViewer,
				PasswordHash: h, CreatedAt: svc.Now()}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// cheapen gives the stored user with the e-mail address a cheap hash of
// goodPassword.
func cheapen(t testing.TB, svc *fleet.Service, email string) {
	t.Helper()
	err := svc.Store().Update(context.Background(), func(tx fleet.Tx) error {
		u, err := tx.UserByEmail(email)
		if err != nil {
			return err
		}
		u.PasswordHash = cheapHash(goodPassword)
		return tx.UpdateUser(u)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// sleeps records what the per-e-mail brake asks to wait, and returns at
// once: a Service's Options.Sleep.
type sleeps struct {
	mu    sync.Mutex
	waits []time.Duration
}

func (s *sleeps) sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	s.waits = append(s.waits, d)
	s.mu.Unlock()
	return nil
}

func (s *sleeps) all() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.waits...)
}

// signInService is userService's store and clock under a service with
// opts (its clock and, unless set, a recording Sleep added).
func signInService(t testing.TB, opts fleet.Options) (*fleet.Service, *testclock.Clock, fleet.Account, *sleeps) {
	t.Helper()
	svc, clock, a := userService(t)
	cheapen(t, svc, "ada@example.com")
	rec := &sleeps{}
	opts.Now = clock.Now
	if opts.Passwords == nil {
		opts.Passwords = testpass.Cheap()
	}
	if opts.Sleep == nil {
		opts.Sleep = rec.sleep
	}
	return fleet.NewService(svc.Store(), opts), clock, a, rec
}

// Failures from one address never keep a person out: after more than
// LoginFailures wrong passwords for ada from one address, and more from
// others, her right password from another address signs her in, again and
// again. The per-e-mail brake only slows the attempts (a bounded, growing
// wait), and her success lifts it.
func TestSignInFailuresElsewhereNeverLockOut(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	svc, clock, a, rec := signInService(t, fleet.Options{})
	addCheapUsers(t, svc, a, "eve@example.com")
	for range fleet.LoginFailures + 5 {
		_, _, err := svc.SignIn(ctx, "ada@example.com", "wrong password here", "198.51.100.7")
		if fleet.ErrorCode(err) != fleet.CodeUnauthorized && fleet.ErrorCode(err) != fleet.CodeRateLimitExceeded {
			t.Fatalf("wrong password: %v", err)
		}
	}
	for round := range 3 {
		// The guesser keeps at it from other addresses too.
		for i := range fleet.LoginFailures {
			_, _, err := svc.SignIn(ctx, "ada@example.com", "wrong password here", fmt.Sprintf("203.0.113.%d", 10*round+i))
			is.Equal(fleet.ErrorCode(err), fleet.CodeUnauthorized)
		}
		us, _, err := svc.SignIn(ctx, "ada@example.com", goodPassword, "192.0.2.44")
		is.NoErr(err) // the right password, from her own address
		is.Equal(us.User.Email, "ada@example.com")
		clock.Advance(time.Minute)
	}
	waits := rec.all()
	is.True(len(waits) > 0) // the brake slowed the guesses
	grew := false
	for i, d := range waits {
		is.True(d > 0 && d <= fleet.MaxLoginDelay) // bounded
		if i > 0 && d > waits[i-1] {
			grew = true
		}
	}
	is.True(grew) // and growing
	// Her success lifted the brake: her next attempt is not slowed.
	n := len(rec.all())
	_, _, err := svc.SignIn(ctx, "ada@example.com", goodPassword, "192.0.2.44")
	is.NoErr(err)
	is.Equal(len(rec.all()), n)
	// Another person is not slowed by ada's guessers at all.
	_, _, err = svc.SignIn(ctx, "eve@example.com", goodPassword, "192.0.2.45")
	is.NoErr(err)
	is.Equal(len(rec.all()), n)
}

// The per-(e-mail, address) throttle: LoginFailures failures for ada from
// one address refuse ada from there, right password included, with a
// Retry-After, until the window has room; another person from that address
// and ada from another address go on.
func TestSignInThrottlePerEmailAndAddress(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	svc, clock, a, _ := signInService(t, fleet.Options{})
	addCheapUsers(t, svc, a, "eve@example.com")
	for range fleet.LoginFailures {
		_, _, err := svc.SignIn(ctx, "ada@example.com", "wrong password here", "10.1.1.1")
		is.Equal(fleet.ErrorCode(err), fleet.CodeUnauthorized)
	}
	_, _, err := svc.SignIn(ctx, "ADA@example.com ", goodPassword, "10.1.1.1")
	is.Equal(fleet.ErrorCode(err), fleet.CodeRateLimitExceeded)
	is.Equal(fleet.ErrorMessage(err), "Too many failed sign-ins. Try again in 15 minutes.")
	wait, ok := fleet.RetryAfter(err)
	is.True(ok)
	is.Equal(wait, fleet.LoginWindow)

	_, _, err = svc.SignIn(ctx, "eve@example.com", goodPassword, "10.1.1.1")
	is.NoErr(err) // the address has room for others
	_, _, err = svc.SignIn(ctx, "ada@example.com", goodPassword, "10.1.1.2")
	is.NoErr(err) // and ada elsewhere

	clock.Advance(fleet.LoginWindow - time.Minute)
	_, _, err = svc.SignIn(ctx, "ada@example.com", goodPassword, "10.1.1.1")
	is.Equal(fleet.ErrorCode(err), fleet.CodeRateLimitExceeded)
	wait, _ = fleet.RetryAfter(err)
	is.Equal(wait, time.Minute)
	clock.Advance(time.Minute)
	_, _, err = svc.SignIn(ctx, "ada@example.com", goodPassword, "10.1.1.1")
	is.NoErr(err)
}

// The per-address throttle still stops a guesser who tries many e-mail
// addresses from one address (an IPv6 /64 counting as one): after
// AddressLoginFailures failures, every attempt from there is refused,
// whoever it names; other addresses go on.
func TestSignInThrottlePerAddress(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	svc, clock, a, _ := signInService(t, fleet.Options{})
	var guessed []string
	for i := range fleet.AddressLoginFailures {
		guessed = append(guessed, fmt.Sprintf("guess%d@example.com", i))
	}
	addCheapUsers(t, svc, a, guessed...)
	for i := range fleet.AddressLoginFailures {
		// Each guess from another address of the same /64.
		_, _, err := svc.SignIn(ctx, guessed[i], "wrong password here", fmt.Sprintf("2001:db8:1:2::%x", i+1))
		is.Equal(fleet.ErrorCode(err), fleet.CodeUnauthorized)
	}
	_, _, err := svc.SignIn(ctx, "ada@example.com", goodPassword, "2001:db8:1:2:ffff::1")
	is.Equal(fleet.ErrorCode(err), fleet.CodeRateLimitExceeded)
	_, _, err = svc.SignIn(ctx, "ada@example.com", goodPassword, "2001:db8:1:3::1")
	is.NoErr(err) // another /64
	clock.Advance(fleet.LoginWindow)
	_, _, err = svc.SignIn(ctx, "ada@example.com", goodPassword, "2001:db8:1:2::1")
	is.NoErr(err)
}

// Wrong sign-ins made at once from one address are counted before they
// are checked: of 40 at once, exactly the allowance is judged (a password
// hash runs) and the rest are refused without one — LoginFailures for one
// e-mail address, AddressLoginFailures for many. The hashes running at
// once never exceed Options.MaxPasswordHashes.
func TestConcurrentSignInsCountBeforeHashing(t *testing.T) {
	for _, tc := range []struct {
		name      string
		emails    int
		allowance int
	}{
		{"one e-mail", 1, fleet.LoginFailures},
		{"many e-mails", 40, fleet.AddressLoginFailures},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			ctx := context.Background()
			const bound = 3
			svc, _, a, _ := signInService(t, fleet.Options{MaxPasswordHashes: bound})
			var emails []string
			for i := range tc.emails {
				emails = append(emails, fmt.Sprintf("p%d@example.com", i))
			}
			addCheapUsers(t, svc, a, emails...)
			fleet.SetPasswordHashWait(svc, time.Minute) // a slow machine judges them all in time
			var judged, peak atomic.Int64
			fleet.SetPasswordHashStarted(svc, func(running int) {
				judged.Add(1)
				for range 100 { // the others run meanwhile
					runtime.Gosched()
				}
				for {
					p := peak.Load()
					if int64(running) <= p || peak.CompareAndSwap(p, int64(running)) {
						break
					}
				}
			})
			const attempts = 40
			start := make(chan struct{})
			codes := make([]string, attempts)
			var wg sync.WaitGroup
			for i := range attempts {
				wg.Go(func() {
					<-start
					_, _, err := svc.SignIn(ctx, emails[i%len(emails)], "wrong password here", "198.51.100.9")
					codes[i] = fleet.ErrorCode(err)
				})
			}
			close(start)
			wg.Wait()
			count := map[string]int{}
			for _, c := range codes {
				count[c]++
			}
			is.Equal(int(judged.Load()), tc.allowance)                          // exactly the allowance judged
			is.Equal(count[fleet.CodeUnauthorized], tc.allowance)               // and answered wrong
			is.Equal(count[fleet.CodeRateLimitExceeded], attempts-tc.allowance) // the rest refused
			is.True(peak.Load() >= 1 && peak.Load() <= bound)                   // never more hashes at once than the bound
		})
	}
}

// However many attempts come at once from anywhere, no more than
// Options.MaxPasswordHashes hashes run at once: each hash is held in the
// test hook until the test lets one go, so every start is seen with how
// many run. An attempt that cannot get a slot in time is answered
// unavailable with a Retry-After, and is not counted against its address.
func TestPasswordHashesAreBounded(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	const bound = 2
	svc, _, a, _ := signInService(t, fleet.Options{MaxPasswordHashes: bound})
	var emails []string
	for i := range 24 {
		emails = append(emails, fmt.Sprintf("b%d@example.com", i))
	}
	addCheapUsers(t, svc, a, emails...)
	fleet.SetPasswordHashWait(svc, time.Minute)
	started := make(chan int, len(emails))
	release := make(chan struct{})
	fleet.SetPasswordHashStarted(svc, func(running int) {
		started <- running
		<-release
	})
	var wg sync.WaitGroup
	for i, e := range emails {
		wg.Go(func() {
			_, _, err := svc.SignIn(ctx, e, goodPassword, fmt.Sprintf("192.0.2.%d", i))
			if err != nil {
				t.Errorf("sign in %s: %v", e, err)
			}
		})
	}
	peak := 0
	for judged := 0; judged < len(emails); { // every attempt is judged (distinct addresses)
		peak = max(peak, <-started)
		held := 1
		// Before letting any go, let every other attempt run as far as it
		// can, and count the hashes that started meanwhile.
		for range 100 {
			runtime.Gosched()
		}
	drain:
		for {
			select {
			case n := <-started:
				peak, held = max(peak, n), held+1
			default:
				break drain
			}
		}
		for range held {
			release <- struct{}{}
		}
		judged += held
	}
	wg.Wait()
	is.True(peak >= 1 && peak <= bound) // never more hashes at once than the bound

	// Every slot held: an attempt that finds none within the wait is
	// answered 503 with Retry-After, without a hash.
	fleet.SetPasswordHashWait(svc, 0)
	for i := range bound {
		wg.Go(func() { svc.SignIn(ctx, emails[i], goodPassword, "192.0.2.200") })
	}
	for range bound {
		<-started
	}
	done := make(chan error, 1)
	go func() {
		_, _, err := svc.SignIn(ctx, emails[5], "wrong password here", "192.0.2.201")
		done <- err
	}()
	select {
	case err := <-done:
		is.Equal(fleet.ErrorCode(err), fleet.CodeUnavailable)
		_, ok := fleet.RetryAfter(err)
		is.True(ok)
	case n := <-started:
		close(release)
		t.Fatalf("a hash started with %d running", n)
	}
	close(release)
	wg.Wait()
	fleet.SetPasswordHashStarted(svc, nil)
	fleet.SetPasswordHashWait(svc, time.Minute)
	for range fleet.LoginFailures - 1 { // the refused attempt was not counted
		_, _, err := svc.SignIn(ctx, emails[5], "wrong password here", "192.0.2.201")
		is.Equal(fleet.ErrorCode(err), fleet.CodeUnauthorized)
	}
	_, _, err := svc.SignIn(ctx, emails[5], goodPassword, "192.0.2.201")
	is.NoErr(err)
}

// heapObjects is the bytes of live and not yet swept heap objects.
func heapObjects() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// A burst of 200 sign-ins at once from one address takes bounded memory:
// the heap, sampled as each password hash starts, stays within twice (the
// garbage collector's headroom) the heap before the burst plus one argon2id
// hash's 19 MiB (fleetpass.Argon2id, fleetserver's hasher) for each slot and
// one more.
func TestSignInBurstMemoryIsBounded(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	const slots = 2
	svc, _, _, _ := signInService(t, fleet.Options{MaxPasswordHashes: slots, Passwords: fleetpass.Argon2id()})
	fleet.SetPasswordHashWait(svc, time.Minute)
	const argonBytes = 19 << 20
	defer debug.SetGCPercent(debug.SetGCPercent(100)) // the headroom the bound counts on
	runtime.GC()
	base := heapObjects()
	bound := 2*(base+(slots+1)*argonBytes) + 8<<20
	var mu sync.Mutex
	var peak uint64
	fleet.SetPasswordHashStarted(svc, func(int) {
		h := heapObjects()
		mu.Lock()
		peak = max(peak, h)
		mu.Unlock()
	})
	const attempts = 200
	start := make(chan struct{})
	var wg sync.WaitGroup
	var refused atomic.Int64
	for i := range attempts {
		wg.Go(func() {
			<-start
			_, _, err := svc.SignIn(ctx, fmt.Sprintf("nobody%d@example.com", i), "wrong password here", "198.51.100.200")
			if fleet.ErrorCode(err) == fleet.CodeRateLimitExceeded {
				refused.Add(1)
			}
		})
	}
	close(start)
	wg.Wait()
	peak = max(peak, heapObjects())
	t.Logf("heap before %.1f MiB, peak %.1f MiB, bound %.1f MiB", float64(base)/(1<<20), float64(peak)/(1<<20), float64(bound)/(1<<20))
	is.Equal(refused.Load(), int64(attempts-fleet.AddressLoginFailures))
	is.True(peak <= bound) // the burst's memory is bounded
}

// The throttle follows at most MaxLoginSubjects subjects: an attacker who
// rotates addresses and e-mail addresses makes it forget the least
// recently seen, not everything, so a guesser still trying from one
// address stays refused.
func TestSignInThrottleStateIsBounded(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	svc, _, a, _ := signInService(t, fleet.Options{})
	addCheapUsers(t, svc, a, "eve@example.com")
	const max = 40
	var rotated []string
	for i := range 3 * max {
		rotated = append(rotated, fmt.Sprintf("r%d@example.com", i))
	}
	addCheapUsers(t, svc, a, rotated...)
	fleet.SetLoginSubjectsMax(svc, max)
	for range fleet.LoginFailures {
		_, _, err := svc.SignIn(ctx, "eve@example.com", "wrong password here", "198.51.100.1")
		is.Equal(fleet.ErrorCode(err), fleet.CodeUnauthorized)
	}
	for i := range 3 * max {
		if i%5 == 0 { // the guesser keeps trying, and is refused
			_, _, err := svc.SignIn(ctx, "eve@example.com", goodPassword, "198.51.100.1")
			is.Equal(fleet.ErrorCode(err), fleet.CodeRateLimitExceeded)
		}
		svc.SignIn(ctx, rotated[i], "wrong password here", fmt.Sprintf("10.9.%d.%d", i/250, i%250))
		is.True(fleet.LoginSubjects(svc) <= max) // bounded
	}
	is.True(fleet.LoginSubjects(svc) >= max-3) // it follows what it may
	_, _, err := svc.SignIn(ctx, "eve@example.com", goodPassword, "198.51.100.1")
	is.Equal(fleet.ErrorCode(err), fleet.CodeRateLimitExceeded)
}
