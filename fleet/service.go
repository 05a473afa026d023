package fleet

import (
	"context"
	"log/slog"
	"runtime"
	"sync"
	"time"

	"github.com/fleetkit/fleetapi/fleet/internal/broker"
	"github.com/fleetkit/fleetapi/fleet/internal/password"
)

// Options configure a Service. The zero value is usable.
type Options struct {
	// Now is the clock; time.Now when nil. Every rule that depends on time
	// reads it, so tests control windows, sweeps and schedules without
	// sleeping.
	Now func() time.Time
	// Logger receives the service's own log lines; slog.Default when nil.
	Logger *slog.Logger
	// AuthCacheTTL is how long a key looked up by hash is trusted before it
	// is read again, so that a key revoked by another process sharing the
	// store is refused within that time. Default 2s; at most 5s.
	AuthCacheTTL time.Duration
	// AddressLimit is the hourly allowance of requests that cannot be tied
	// to a valid key, per client address: a brake on key guessing. Zero
	// means the default, DefaultAddressLimit; AddressLimitOff (any negative
	// value) turns the brake off, for local development.
	AddressLimit int
	// Thresholds configure the vehicle status machine; zero fields take
	// DefaultStatusThresholds.
	Thresholds StatusThresholds
	// SweepEvery is how often Run looks for vehicles and maintenance
	// schedules whose status the clock changed. Default 5s.
	SweepEvery time.Duration
	// Webhooks configure endpoint registration (see WebhookOptions).
	Webhooks WebhookOptions
	// AlertCacheBytes bounds the memory that accounts' alert rules,
	// compiled for judging location reports, may take (by estimate; the
	// least recently used go first). An account whose rules alone take more
	// is compiled for each report instead. Default 256 MiB.
	AlertCacheBytes int
	// Passwords hashes people's passwords and verifies them at sign-in.
	// When nil, the service uses fleet's default, from the standard
	// library: PBKDF2-HMAC-SHA256 with OWASP's iteration count
	// (HashPassword), which refuses Argon2id hashes with a logged reason.
	// fleetserver passes fleetpass.Argon2id(), and so must a program that
	// shares a store with it.
	Passwords PasswordHasher
	// MaxPasswordHashes is how many password hashes (with
	// fleetpass.Argon2id, 19 MiB of memory each) run at once, for sign-ins, sign-ups and password
	// changes together: what bounds the memory a burst of them takes.
	// Beyond it an attempt waits for a slot (PasswordHashWait at most).
	// Default runtime.GOMAXPROCS(0).
	MaxPasswordHashes int
	// Sleep waits d, or until ctx ends (returning its error): how the
	// per-e-mail sign-in brake (MaxLoginDelay) waits. A timer when nil;
	// tests pass one that follows their clock.
	Sleep func(ctx context.Context, d time.Duration) error
	// Protocols are what each device protocol can carry, by protocol name
	// ("teltonika"), as its encoder says: a command whose device last spoke
	// one of them is checked against it when it is posted. A program that
	// serves devices fills it from its encoders; a protocol missing here
	// is not checked (its encoder decides at delivery).
	Protocols map[string]ProtocolCommands
	// CheckCommand, when set, judges a command for the protocol its device
	// last spoke, as that protocol's encoder would when it is sent: it
	// returns the member at fault and why ("", "" when the protocol
	// carries the command as given), which CreateCommand refuses as a
	// validation_error. A program that serves devices sets it from its
	// encoders (fleetdevice.CommandCheck).
	CheckCommand func(protocol string, c ClaimedCommand) (field, problem string)
	// IngestOneByOne makes a location batch write its points, vehicles,
	// trips and device row through the transaction's methods one by one,
	// as they are decided, instead of as one write-set applied by
	// LocationTx.ApplyIngest (see IngestWrites). The stores' tests compare
	// the two; a store's behaviour is the same with either.
	IngestOneByOne bool
}

// The brake on requests without a valid key (Options.AddressLimit).
const (
	DefaultAddressLimit = 60
	AddressLimitOff     = -1
)

// DefaultAlertCacheBytes is Options.AlertCacheBytes by default.
const DefaultAlertCacheBytes = 256 << 20

// Service holds the use cases of the API. It is safe for concurrent use.
// Create it with NewService; run its background work with Run.
type Service struct {
	store  Store
	now    func() time.Time
	log    *slog.Logger
	opts   Options
	auth   authCache
	usage  usageRecorder
	stream *broker.Broker[StreamItem]
	flushM sync.Mutex
	logins loginThrottle
	hashes *password.Slots
	// dummyHash is verified against when no user has the e-mail given at
	// sign-in, so that an unknown address costs the same time as a wrong
	// password; made by Options.Passwords at the first such sign-in.
	dummyHash func() string

	alertCache alertCache
	gates      gates
	offline    offlineSweep
	// judgeBudget is the work a batch's judgement may take inside the
	// write transaction (see judgeBatch); judging, if set, is called as a
	// batch starts being judged outside it (tests block on it).
	judgeBudget int
	judging     func(accountID string)
	// ready is the store probe /readyz shares (see Ready).
	ready readyProbe
	// stats count what Stats reports.
	stats stats
	// noTrips turns trip tracking off (the baseline of the ingest
	// benchmarks).
	noTrips bool
	// devices routes device reports (device_edge.go); unknownLimit rates
	// the records of unknown identifiers per address.
	devices      deviceCache
	unknownLimit unknownLimit
	// shares are the share streams open on this service (service_sharelinks.go).
	shares shareStreams
	// notify keeps accounts' notification rules; mailWake wakes the mail
	// sender when a transaction that queued mail commits.
	notify   notifyCache
	mailWake chan struct{}
	// cmds are the listeners waiting for their devices' commands
	// (service_commands.go).
	cmds commandWaiters
}

// NewService returns a Service over store.
func NewService(store Store, opts Options) *Service {
	opts = opts.withDefaults()
	s := &Service{store: store, now: opts.Now, log: opts.Logger, opts: opts}
	s.logins.init(MaxLoginSubjects)
	s.hashes = password.NewSlots(opts.MaxPasswordHashes, PasswordHashWait)
	s.dummyHash = sync.OnceValue(func() string { return opts.Passwords.Hash("not a password of anyone") })
	s.alertCache.init(opts.AlertCacheBytes)
	s.gates.init()
	s.judgeBudget = defaultJudgeBudget
	s.auth.Init(maxAuthEntries)
	s.notify.Init(maxNotifyEntries)
	s.usage.init()
	s.devices.init()
	s.unknownLimit.init()
	s.cmds.init()
	s.stream = newBroker(time.Now())
	s.mailWake = make(chan struct{}, 1)
	return s
}

// withDefaults fills in the options left at their zero value (and clamps
// those out of their range), as NewService documents each.
func (opts Options) withDefaults() Options {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.AuthCacheTTL <= 0 || opts.AuthCacheTTL > 5*time.Second {
		opts.AuthCacheTTL = 2 * time.Second
	}
	switch {
	case opts.AddressLimit == 0:
		opts.AddressLimit = DefaultAddressLimit
	case opts.AddressLimit < 0:
		opts.AddressLimit = AddressLimitOff
	}
	if opts.SweepEvery <= 0 {
		opts.SweepEvery = 5 * time.Second
	}
	if opts.AlertCacheBytes <= 0 {
		opts.AlertCacheBytes = DefaultAlertCacheBytes
	}
	if opts.Passwords == nil {
		opts.Passwords = defaultPasswords{log: opts.Logger}
	}
	if opts.MaxPasswordHashes <= 0 {
		opts.MaxPasswordHashes = runtime.GOMAXPROCS(0)
	}
	if opts.Sleep == nil {
		opts.Sleep = sleepCtx
	}
	return opts
}

// Now returns the service clock's time, normalised as stored times are.
func (s *Service) Now() time.Time { return Timestamp(s.now()) }

// Store returns the store the service runs on.
func (s *Service) Store() Store { return s.store }

// Run does the service's background work until ctx ends: every second it
// flushes request usage and ends the live streams of keys no longer valid
// and of share links no longer standing (CheckStreams, CheckShareStreams);
// every SweepEvery it sweeps vehicle statuses, checks maintenance
// schedules against the calendar and expires commands; every minute it
// purges expired records. When the store is a LiveFeed (PostgreSQL), it
// follows the feed shared by the servers (see Jobs.FollowLive) while it
// runs, and when it is a CommandFeed, the commands announced by every
// server (Jobs.FollowCommands).
// Callers that drive time themselves call Flush, CheckStreams, Sweep,
// CheckMaintenance, ExpireCommands and Maintain instead. When ctx ends, Run flushes once
// more and returns.
func (s *Service) Run(ctx context.Context) {
	following := make(chan struct{})
	go func() {
		defer close(following)
		s.Jobs().FollowLive(ctx)
	}()
	defer func() { <-following }()
	followingCommands := make(chan struct{})
	go func() {
		defer close(followingCommands)
		s.Jobs().FollowCommands(ctx)
	}()
	defer func() { <-followingCommands }()
	flush := time.NewTicker(time.Second)
	defer flush.Stop()
	sweep := time.NewTicker(s.opts.SweepEvery)
	defer sweep.Stop()
	maintain := time.NewTicker(time.Minute)
	defer maintain.Stop()
	for {
		select {
		case <-ctx.Done():
			fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			if err := s.Jobs().Flush(fctx); err != nil {
				s.log.Error("flush usage at shutdown", "err", err)
			}
			cancel()
			return
		case <-flush.C:
			t := time.Now()
			err := s.Jobs().Flush(ctx)
			s.stats.job(jobFlush, t, err)
			if err != nil {
				s.log.Error("flush usage", "err", err)
			}
			t = time.Now()
			_, err = s.Jobs().CheckStreams(ctx)
			if _, serr := s.Jobs().CheckShareStreams(ctx); err == nil {
				err = serr
			}
			s.stats.job(jobCheckStreams, t, err)
			if err != nil {
				s.log.Error("check the keys and share links of live streams", "err", err)
			}
		case <-sweep.C:
			t := time.Now()
			_, err := s.Jobs().Sweep(ctx)
			s.stats.job(jobSweep, t, err)
			if err != nil {
				s.log.Error("status sweep", "err", err)
			}
			t = time.Now()
			_, err = s.Jobs().CheckMaintenance(ctx)
			s.stats.job(jobCheckMaintenance, t, err)
			if err != nil {
				s.log.Error("maintenance check", "err", err)
			}
			if _, err := s.Jobs().ExpireCommands(ctx); err != nil {
				s.log.Error("expire commands", "err", err)
			}
		case <-maintain.C:
			t := time.Now()
			err := s.Jobs().Maintain(ctx)
			s.stats.job(jobPurge, t, err)
			if err != nil {
				s.log.Error("maintenance", "err", err)
			}
		}
	}
}

// Maintain purges what has outlived its retention at the clock's time:
// idempotency records after 24 hours, ended rate-limit windows, usage
// counts older than the usage endpoint reaches, expired stream tokens, events and webhook delivery
// attempts after 30 days, the shared live feed (LiveFeed) after the
// replay window, ended dashboard sessions and sign-in links, records of
// unknown device identifiers unseen for UnknownDeviceRetention, share
// links ShareLinkRetention after they expired, commands CommandRetention
// after they were made, and
// location points older than the longest plan reach.
func (j Jobs) Maintain(ctx context.Context) error {
	s := j.s
	now := s.Now()
	if _, err := s.store.PurgeIdempotency(ctx, now.Add(-IdempotencyRetention)); err != nil {
		return err
	}
	if _, err := s.store.PurgeQuota(ctx, now.Add(-QuotaWindow)); err != nil {
		return err
	}
	if _, err := s.store.PurgeStreamTokens(ctx, now); err != nil {
		return err
	}
	if _, err := s.store.PurgeUsage(ctx, now.Truncate(time.Hour).Add(-MaxUsageHours*time.Hour)); err != nil {
		return err
	}
	if _, err := s.store.PurgeEvents(ctx, now.Add(-EventRetention)); err != nil {
		return err
	}
	if _, err := s.store.PurgeDeliveries(ctx, now.Add(-EventRetention)); err != nil {
		return err
	}
	if _, err := s.store.PurgeMail(ctx, now.Add(-MailRetention)); err != nil {
		return err
	}
	if feed, ok := s.store.(LiveFeed); ok {
		if _, err := feed.PurgeLive(ctx, now.Add(-StreamReplayWindow)); err != nil {
			return err
		}
	}
	if err := s.purgeSessions(ctx, now); err != nil {
		return err
	}
	if _, err := s.store.PurgeUnknownDevices(ctx, now.Add(-UnknownDeviceRetention)); err != nil {
		return err
	}
	if _, err := s.store.PurgeShareLinks(ctx, now.Add(-ShareLinkRetention)); err != nil {
		return err
	}
	if _, err := s.store.PurgeCommands(ctx, now.Add(-CommandRetention)); err != nil {
		return err
	}
	_, err := s.store.PurgePoints(ctx, now.Add(-MaxHistoryReach()))
	return err
}

// Principal is who makes a request: a valid key and its account.
type Principal struct {
	Key     Key
	Account Account
}

// SystemPrincipal acts for an account with every permission, for code that
// embeds the service and calls it on its own behalf (simulators, imports).
func SystemPrincipal(a Account) Principal {
	return Principal{Key: Key{ID: "system", AccountID: a.ID, Permissions: Permissions{PermAll}}, Account: a}
}

// Require returns insufficient_permissions unless the key holds perm.
func (p Principal) Require(perm Permission) error {
	if p.Key.Permissions.Allows(perm) {
		return nil
	}
	return Errorf(CodeInsufficientPermissions, "This API key does not have the %s permission.", perm)
}

func (s *Service) update(ctx context.Context, fn func(Tx) error) error {
	queued := false
	err := s.store.Update(ctx, func(tx Tx) error {
		st := &svcTx{Tx: tx}
		err := fn(st)
		if err == nil {
			err = st.flushMail()
		}
		queued = st.queued
		return err
	})
	if err == nil && queued {
		s.wakeMail()
	}
	return err
}

func (s *Service) view(ctx context.Context, fn func(Tx) error) error {
	return s.store.View(ctx, fn)
}
