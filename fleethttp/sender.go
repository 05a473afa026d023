package fleethttp

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"maps"
	"math/rand/v2"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"golang.org/x/time/rate"
)

// SenderOptions configure a Sender. The zero value is usable.
type SenderOptions struct {
	// Insecure allows http URLs and loopback or private addresses, for
	// development and tests (the server's --insecure-webhooks).
	Insecure bool
	// Workers is how many deliveries are made at once, all accounts
	// together. Default 64: four times what one account may hold, so that
	// a few accounts whose receivers hang cannot fill it.
	Workers int
	// EndpointInFlight and AccountInFlight cap how many deliveries one
	// endpoint, and one account's endpoints together, have in flight.
	// Default fleet.EndpointInFlight (2) and fleet.AccountInFlight (16).
	// The caps hold per sender: each of several senders sharing a store
	// (several servers) applies them to its own deliveries.
	EndpointInFlight, AccountInFlight int
	// Batch is how many due deliveries one claim takes at most. Default
	// 100.
	Batch int
	// Timeout is how long a receiver has to answer. Default
	// fleet.WebhookTimeout (15 seconds).
	Timeout time.Duration
	// Lease is how long a claimed delivery is this sender's; another
	// sender may take it after that (this one having died). Default 2
	// minutes, well over the 15-second timeout.
	Lease time.Duration
	// PollEvery is how often Run looks for due deliveries. Default 500ms.
	PollEvery time.Duration
	// EndpointRate and EndpointBurst pace each endpoint: deliveries beyond
	// them wait their turn, so that one busy endpoint neither floods its
	// receiver nor holds up the others. Default 50 per second, burst 50.
	EndpointRate  rate.Limit
	EndpointBurst int
	// Logger receives the sender's log lines; slog.Default when nil.
	Logger *slog.Logger
	// Jitter returns a number in [0, 1) that spreads retries; random when
	// nil.
	Jitter func() float64
}

// Sender delivers webhook events: it claims due deliveries from the store,
// POSTs each event signed per the Standard Webhooks specification, records
// each attempt and schedules the next one. Any number of senders may run on
// one store: a claim is a lease that no other sender takes while it holds.
//
// Deliveries are fair across accounts and endpoints: each claimed delivery
// is sent at once by a goroutine of its own, and its outcome is recorded
// as soon as it is known (outcomes that are ready together are recorded
// together), never after the slowest of a batch. A sender holds at most
// EndpointInFlight deliveries of one endpoint and AccountInFlight of one
// account, and its claims take accounts, and an account's endpoints, in
// turn (see fleet.DeliveryClaim.Pick): a receiver that hangs costs its own
// endpoint's slots, each for at most Timeout, and nobody else's.
//
// A server runs it with Run alongside fleet.Service.Run. Code that drives
// time itself calls RunOnce or Drain, which deliver what is due at the
// service clock's time and return.
type Sender struct {
	svc    *fleet.Service
	opts   SenderOptions
	client *http.Client
	log    *slog.Logger

	claimMu sync.Mutex // one claim at a time: it reads and then adds to held

	mu       sync.Mutex
	limiters map[string]*pace
	turns    map[string]time.Time // delivery id -> the turn reserved for it
	held     holdings

	// outcomes count the attempts recorded, by outcome (see SenderStats).
	outcomes [3]atomic.Uint64
}

// holdings count the deliveries a sender has claimed and not yet sent.
type holdings struct {
	total                 int
	byEndpoint, byAccount map[string]int
}

// add counts n more (or, negative, fewer) of d's endpoint and account.
func (h *holdings) add(d fleet.Delivery, n int) {
	h.total += n
	for _, c := range []struct {
		m map[string]int
		k string
	}{{h.byEndpoint, d.WebhookID}, {h.byAccount, d.AccountID}} {
		if c.m[c.k] += n; c.m[c.k] <= 0 {
			delete(c.m, c.k)
		}
	}
}

// pace is an endpoint's limiter and when it was last used.
type pace struct {
	*rate.Limiter
	used time.Time
}

// errForbiddenAddr is a refused connection to a forbidden address.
var errForbiddenAddr = errors.New("the endpoint's address is not allowed")

// NewSender returns a sender for svc's deliveries.
func NewSender(svc *fleet.Service, opts SenderOptions) *Sender {
	if opts.Workers <= 0 {
		opts.Workers = 64
	}
	if opts.EndpointInFlight <= 0 {
		opts.EndpointInFlight = fleet.EndpointInFlight
	}
	if opts.AccountInFlight <= 0 {
		opts.AccountInFlight = fleet.AccountInFlight
	}
	if opts.Batch <= 0 {
		opts.Batch = 100
	}
	if opts.Timeout <= 0 {
		opts.Timeout = fleet.WebhookTimeout
	}
	if opts.Lease <= 0 {
		opts.Lease = 2 * time.Minute
	}
	if opts.PollEvery <= 0 {
		opts.PollEvery = 500 * time.Millisecond
	}
	if opts.EndpointRate == 0 {
		opts.EndpointRate = 50
	}
	if opts.EndpointBurst <= 0 {
		opts.EndpointBurst = 50
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Jitter == nil {
		opts.Jitter = rand.Float64
	}
	return &Sender{svc: svc, opts: opts, client: webhookClient(opts.Insecure, opts.Timeout), log: opts.Logger,
		limiters: map[string]*pace{}, turns: map[string]time.Time{},
		held: holdings{byEndpoint: map[string]int{}, byAccount: map[string]int{}}}
}

// webhookClient is an HTTP client that follows no redirect, uses no proxy,
// gives up after timeout and, unless insecure, refuses to connect to a
// forbidden address: the check runs on the address actually dialled, after
// resolution, so a name that resolves elsewhere than it did at
// registration (DNS rebinding) gets nowhere.
func webhookClient(insecure bool, timeout time.Duration) *http.Client {
	d := &net.Dialer{Timeout: min(10*time.Second, timeout), KeepAlive: 30 * time.Second}
	if !insecure {
		d.Control = func(network, address string, _ syscall.RawConn) error {
			ap, err := netip.ParseAddrPort(address)
			if err != nil || fleet.ForbiddenAddr(ap.Addr()) {
				return errForbiddenAddr
			}
			return nil
		}
	}
	tr := &http.Transport{
		Proxy:                 nil,
		DialContext:           d.DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          256,
		MaxIdleConnsPerHost:   16,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   min(10*time.Second, timeout),
		ExpectContinueTimeout: time.Second,
		ResponseHeaderTimeout: timeout,
	}
	return &http.Client{
		Transport:     tr,
		Timeout:       timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// Run delivers until ctx ends: it claims whenever a slot frees up and the
// last claim left deliveries due, and every PollEvery. Errors are logged.
func (s *Sender) Run(ctx context.Context) {
	t := time.NewTicker(s.opts.PollEvery)
	defer t.Stop()
	s.deliver(ctx, modeRun, t.C)
}

// Drain delivers until nothing is due at the service clock's time and
// nothing is in flight, and returns how many attempts it recorded.
func (s *Sender) Drain(ctx context.Context) (int, error) {
	return s.deliver(ctx, modeDrain, nil)
}

// RunOnce claims one batch of deliveries due at the service clock's time
// (as many as Batch, the free workers and the in-flight caps allow), makes
// them and records each outcome. It returns how many attempts it recorded.
func (s *Sender) RunOnce(ctx context.Context) (int, error) {
	return s.deliver(ctx, modeOnce, nil)
}

// mode is how long deliver goes on, and what it does with an error.
type mode uint8

const (
	// modeRun goes on until its context ends, claiming when slots free up
	// and at each poll; errors are logged and it carries on.
	modeRun mode = iota
	// modeDrain goes on until nothing is due and nothing is in flight;
	// the first error stops it and is returned.
	modeDrain
	// modeOnce makes one claim, and returns once what it took is
	// recorded; the first error stops it and is returned.
	modeOnce
)

// logsErrors reports whether the mode logs errors and carries on (rather
// than stopping at the first and returning it).
func (m mode) logsErrors() bool { return m == modeRun }

// done reports whether a mode stops claiming, after a claim: want says
// whether a claim right away would find more, held how many deliveries
// the sender holds.
func (m mode) done(want bool, held int) bool {
	switch m {
	case modeOnce:
		return true
	case modeDrain:
		return !want && held == 0
	}
	return false
}

// finished is a delivery attempt over, to record.
type finished struct {
	job fleet.DeliveryJob
	out fleet.Outcome
}

// maxEmptyClaims is how many claims in a row may come back empty yet
// report deliveries left (taken meanwhile by another sender's claim)
// before an idle sender waits for its next poll, or Drain returns.
const maxEmptyClaims = 10

// deliver claims and sends for as long as its mode says (tick is Run's
// poll; nil otherwise). Each claimed delivery is sent by a goroutine of its
// own, which hands its outcome to the recorder and frees its slot; a freed
// slot wakes the claim loop. It returns how many outcomes were recorded.
func (s *Sender) deliver(ctx context.Context, m mode, tick <-chan time.Time) (int, error) {
	done := make(chan finished, s.opts.Workers+s.opts.Batch)
	freed := make(chan struct{}, 1)
	var sends sync.WaitGroup
	var recorded int
	var recErr error
	var recFailed atomic.Bool // Drain and RunOnce stop claiming when recording fails
	recording := make(chan struct{})
	go func() {
		defer close(recording)
		recorded, recErr = s.record(ctx, done, !m.logsErrors(), &recFailed)
	}()

	var err error
	var errMu sync.Mutex
	fail := func(e error) { // from the goroutines that prepare claimed deliveries
		errMu.Lock()
		defer errMu.Unlock()
		if m.logsErrors() {
			s.log.Error("webhook delivery", "err", e)
		} else if err == nil {
			err = e
			recFailed.Store(true)
		}
	}
	want, more, empty := true, false, 0
	for ctx.Err() == nil && !recFailed.Load() {
		if want {
			var n, limit int
			var cerr error
			n, limit, more, cerr = s.claimAndSend(ctx, done, freed, &sends, fail)
			if cerr != nil {
				fail(cerr)
				more = false
			}
			if n == 0 && more && s.inFlight() == 0 {
				empty++
			} else {
				empty = 0
			}
			// Claim again at once while a claim takes all it asked for and
			// leaves some (or leaves some with nothing in flight: taken by
			// another sender meanwhile); otherwise when slots free up or at
			// the next poll.
			want = more && (limit > 0 && n == limit || s.inFlight() == 0) && empty < maxEmptyClaims
		}
		if recFailed.Load() || m.done(want, s.inFlight()) {
			break
		}
		if want {
			continue
		}
		select {
		case <-freed:
			// A claim for one freed slot would cost a transaction per
			// delivery: wait until half the workers are free (a poll
			// claims whatever is free).
			want = more && s.opts.Workers-s.inFlight() >= max(1, s.opts.Workers/2)
		case <-tick:
			want, empty = true, 0
		case <-ctx.Done():
		}
	}
	sends.Wait()
	close(done)
	<-recording
	errMu.Lock()
	defer errMu.Unlock()
	return recorded, errors.Join(err, recErr)
}

// SenderStats are a sender's figures, for metrics.
type SenderStats struct {
	// Delivered, Refused and Unanswered count the attempts made since the
	// sender started: the receiver answered 2xx, answered something else,
	// or gave no answer (timeout, connection refused, address not allowed).
	Delivered, Refused, Unanswered uint64
	// Held is how many deliveries the sender has claimed and not yet
	// recorded: waiting for their endpoint's turn or in flight. It is the
	// sender's queue; deliveries due but not yet claimed wait in the store.
	Held int
}

// The outcomes of SenderStats, as indexes of Sender.outcomes.
const (
	outcomeDelivered = iota
	outcomeRefused
	outcomeUnanswered
)

func outcomeOf(o fleet.Outcome) int {
	switch {
	case o.Succeeded():
		return outcomeDelivered
	case o.Status != 0:
		return outcomeRefused
	}
	return outcomeUnanswered
}

// Stats returns the sender's figures now.
func (s *Sender) Stats() SenderStats {
	return SenderStats{
		Delivered:  s.outcomes[outcomeDelivered].Load(),
		Refused:    s.outcomes[outcomeRefused].Load(),
		Unanswered: s.outcomes[outcomeUnanswered].Load(),
		Held:       s.inFlight(),
	}
}

// inFlight returns how many deliveries the sender holds.
func (s *Sender) inFlight() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.held.total
}

// claimAndSend leases what the free workers and the caps allow, holds it,
// and hands it to a goroutine that reads what the deliveries need and
// starts a goroutine for each (or hands it back for later if its
// endpoint's pace says so), so that the next claim need not wait for
// those reads. It returns how many deliveries it leased, how many it
// asked for, and whether the claim left some due.
func (s *Sender) claimAndSend(ctx context.Context, done chan<- finished, freed chan<- struct{}, sends *sync.WaitGroup, fail func(error)) (n, limit int, more bool, err error) {
	s.claimMu.Lock()
	defer s.claimMu.Unlock()
	s.mu.Lock()
	c := fleet.DeliveryClaim{
		Limit:       min(s.opts.Batch, s.opts.Workers-s.held.total),
		PerEndpoint: s.opts.EndpointInFlight, PerAccount: s.opts.AccountInFlight,
		HeldByEndpoint: maps.Clone(s.held.byEndpoint), HeldByAccount: maps.Clone(s.held.byAccount),
	}
	s.mu.Unlock()
	if c.Limit <= 0 {
		return 0, 0, true, nil // every worker is busy
	}
	ds, more, err := s.svc.Jobs().LeaseDeliveries(ctx, s.opts.Lease, c)
	if err != nil || len(ds) == 0 {
		return 0, c.Limit, more, err
	}
	s.mu.Lock()
	for _, d := range ds {
		s.held.add(d, 1)
	}
	s.mu.Unlock()
	release := func(d fleet.Delivery) {
		s.mu.Lock()
		s.held.add(d, -1)
		s.mu.Unlock()
		select {
		case freed <- struct{}{}:
		default:
		}
	}
	sends.Go(func() {
		jobs, _, err := s.svc.Jobs().PrepareDeliveries(ctx, ds)
		if err != nil {
			fail(err) // the leases lapse
			jobs = nil
		}
		ready := make(map[string]bool, len(jobs))
		for _, j := range jobs {
			ready[j.Delivery.ID] = true
		}
		for _, d := range ds {
			if !ready[d.ID] {
				release(d) // failed at once, or its endpoint deleted
			}
		}
		now := s.svc.Now()
		for _, j := range jobs {
			if d := s.reserve(j.Delivery.WebhookID, j.Delivery.ID, now); d > 0 {
				if _, err := s.svc.Jobs().DeferDelivery(ctx, j, now.Add(d)); err != nil {
					fail(err) // its lease lapses
				}
				release(j.Delivery)
				continue
			}
			sends.Go(func() {
				out := s.send(ctx, j)
				done <- finished{j, out}
				release(j.Delivery)
			})
		}
	})
	return len(ds), c.Limit, more, nil
}

// recordWindow is how long the recorder gathers outcomes after the first
// of a group: outcomes are recorded in groups of up to Batch, the first at
// most this long after it is known.
const recordWindow = 10 * time.Millisecond

// record records the outcomes that arrive on done until it is closed: each
// time, the outcomes that arrive within recordWindow of the first (up to
// Batch), in one transaction. Only finished attempts arrive, so a slow
// receiver holds back no other outcome. An attempt cut short
// because ctx ended is not recorded: its lease lapses and it is made
// again. With stopOnError, recording stops at the first error, which sets
// failed (the rest's leases lapse); otherwise errors are logged.
func (s *Sender) record(ctx context.Context, done <-chan finished, stopOnError bool, failed *atomic.Bool) (int, error) {
	total := 0
	var first error
	group := make([]finished, 0, s.opts.Batch)
	window := time.NewTimer(0)
	for f := range done {
		group = append(group[:0], f)
		window.Reset(recordWindow)
	gather:
		for len(group) < s.opts.Batch {
			select {
			case g, ok := <-done:
				if !ok {
					break gather
				}
				group = append(group, g)
			case <-window.C:
				break gather
			}
		}
		window.Stop()
		if first != nil && stopOnError {
			continue
		}
		jobs := make([]fleet.DeliveryJob, 0, len(group))
		outs := make([]fleet.Outcome, 0, len(group))
		for _, g := range group {
			if g.out.Status == 0 && ctx.Err() != nil {
				continue // stopping
			}
			jobs, outs = append(jobs, g.job), append(outs, g.out)
			s.outcomes[outcomeOf(g.out)].Add(1)
		}
		if len(jobs) == 0 {
			continue
		}
		n, err := s.svc.Jobs().FinishDeliveries(context.WithoutCancel(ctx), jobs, outs)
		total += n
		if err != nil {
			s.log.Error("webhook delivery: recording outcomes", "err", err)
			if first == nil {
				first = err
				failed.Store(stopOnError)
			}
		}
	}
	return total, first
}

// reserve takes a turn of the endpoint's pace at now for a delivery and
// returns how long it must wait for it (0: go now). A delivery handed back
// keeps the turn it was given, so that it does not queue twice.
func (s *Sender) reserve(webhookID, deliveryID string, now time.Time) time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	if t, ok := s.turns[deliveryID]; ok {
		if !now.Before(t) {
			delete(s.turns, deliveryID)
			return 0
		}
		return t.Sub(now)
	}
	p := s.limiters[webhookID]
	if p == nil {
		if len(s.limiters) > 10_000 { // forget endpoints idle long enough to have a full bucket
			for id, q := range s.limiters {
				if now.Sub(q.used) > time.Hour {
					delete(s.limiters, id)
				}
			}
		}
		p = &pace{Limiter: rate.NewLimiter(s.opts.EndpointRate, s.opts.EndpointBurst)}
		s.limiters[webhookID] = p
	}
	p.used = now
	d := p.ReserveN(now, 1).DelayFrom(now)
	if d > 0 {
		s.turns[deliveryID] = now.Add(d)
	}
	return d
}

// send makes one attempt.
func (s *Sender) send(ctx context.Context, j fleet.DeliveryJob) fleet.Outcome {
	out := fleet.Outcome{Jitter: s.opts.Jitter()}
	if _, err := fleet.CheckWebhookURL(j.URL, s.opts.Insecure); err != nil {
		out.Err = "The endpoint URL is not allowed: " + err.Error() + "."
		return out
	}
	ts := s.svc.Now().Unix()
	sig, err := fleet.SignWebhook(j.Secrets, j.Delivery.EventID, ts, j.Body)
	if err != nil {
		out.Err = "The endpoint's secret is malformed."
		return out
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, j.URL, bytes.NewReader(j.Body))
	if err != nil {
		out.Err = "The endpoint URL is not valid."
		return out
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "Fleet-Webhooks/1")
	req.Header.Set("webhook-id", j.Delivery.EventID)
	req.Header.Set("webhook-timestamp", strconv.FormatInt(ts, 10))
	req.Header.Set("webhook-signature", sig)
	// Standard Webhooks spell the names in lower case.
	for _, k := range []string{"Webhook-Id", "Webhook-Timestamp", "Webhook-Signature"} {
		req.Header[lowerASCII(k)] = req.Header[k]
		delete(req.Header, k)
	}
	start := time.Now()
	res, err := s.client.Do(req)
	out.Duration = time.Since(start)
	if err != nil {
		out.Err = describeSendError(err, s.opts.Timeout)
		return out
	}
	io.Copy(io.Discard, io.LimitReader(res.Body, 64<<10))
	res.Body.Close()
	out.Status = res.StatusCode
	if fleet.HonoursRetryAfter(res.StatusCode) {
		out.RetryAfter = retryAfter(res.Header.Get("Retry-After"), s.svc.Now())
	}
	if res.StatusCode >= 300 && res.StatusCode < 400 {
		out.Err = "The endpoint answered " + strconv.Itoa(res.StatusCode) + " (a redirect, which is not followed)."
	}
	return out
}

func lowerASCII(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

func describeSendError(err error, timeout time.Duration) string {
	var ne net.Error
	switch {
	case errors.Is(err, errForbiddenAddr):
		return unusableHostOutcome
	case errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ne) && ne.Timeout():
		return "The endpoint did not answer within " + seconds(timeout) + "."
	case errors.Is(err, syscall.ECONNREFUSED):
		return "The endpoint refused the connection."
	}
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) {
		return unusableHostOutcome
	}
	return "The request to the endpoint failed."
}

// unusableHostOutcome is the one outcome of a host that resolves to a forbidden
// address and of one that does not resolve, as registration has one answer
// for both: deliveries must not tell which internal names resolve.
const unusableHostOutcome = "The endpoint's host does not resolve to a public address."

// retryAfter reads a Retry-After header: seconds, or an HTTP date.
func retryAfter(v string, now time.Time) time.Duration {
	if v == "" {
		return 0
	}
	if n, err := strconv.Atoi(v); err == nil && n > 0 {
		return time.Duration(n) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}
