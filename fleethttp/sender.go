package fleethttp

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"sync"
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
	// Workers is how many deliveries are made at once. Default 16.
	Workers int
	// Batch is how many due deliveries one claim takes. Default 100.
	Batch int
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
// A server runs it with Run alongside fleet.Service.Run. Code that drives
// time itself calls RunOnce or Drain, which deliver what is due at the
// service clock's time and return.
type Sender struct {
	svc    *fleet.Service
	opts   SenderOptions
	client *http.Client
	log    *slog.Logger

	mu       sync.Mutex
	limiters map[string]*pace
	turns    map[string]time.Time // delivery id -> the turn reserved for it
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
		opts.Workers = 16
	}
	if opts.Batch <= 0 {
		opts.Batch = 100
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
	return &Sender{svc: svc, opts: opts, client: webhookClient(opts.Insecure), log: opts.Logger,
		limiters: map[string]*pace{}, turns: map[string]time.Time{}}
}

// webhookClient is an HTTP client that follows no redirect, uses no proxy,
// gives up after fleet.WebhookTimeout and, unless insecure, refuses to
// connect to a forbidden address: the check runs on the address actually
// dialled, after resolution, so a name that resolves elsewhere than it did
// at registration (DNS rebinding) gets nowhere.
func webhookClient(insecure bool) *http.Client {
	d := &net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}
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
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: time.Second,
		ResponseHeaderTimeout: fleet.WebhookTimeout,
	}
	return &http.Client{
		Transport:     tr,
		Timeout:       fleet.WebhookTimeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// Run delivers until ctx ends, looking for due deliveries every PollEvery.
func (s *Sender) Run(ctx context.Context) {
	t := time.NewTicker(s.opts.PollEvery)
	defer t.Stop()
	for {
		if _, err := s.Drain(ctx); err != nil && ctx.Err() == nil {
			s.log.Error("webhook delivery", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Drain calls RunOnce until nothing is due at the service clock's time and
// returns how many attempts it made.
func (s *Sender) Drain(ctx context.Context) (int, error) {
	total := 0
	for {
		n, claimed, err := s.runOnce(ctx)
		total += n
		if err != nil || claimed < s.opts.Batch {
			return total, err
		}
	}
}

// RunOnce claims one batch of deliveries due at the service clock's time,
// makes them with the worker pool and records each outcome. It returns how
// many attempts it made.
func (s *Sender) RunOnce(ctx context.Context) (int, error) {
	n, _, err := s.runOnce(ctx)
	return n, err
}

func (s *Sender) runOnce(ctx context.Context) (sent, claimed int, err error) {
	jobs, _, err := s.svc.ClaimDeliveries(ctx, s.opts.Lease, fleet.DeliveryClaim{Limit: s.opts.Batch})
	if err != nil || len(jobs) == 0 {
		return 0, 0, err
	}
	now := s.svc.Now()
	ready := jobs[:0:0]
	for _, j := range jobs {
		if d := s.reserve(j.Delivery.WebhookID, j.Delivery.ID, now); d > 0 {
			if _, err := s.svc.DeferDelivery(ctx, j, now.Add(d)); err != nil {
				return 0, len(jobs), err
			}
			continue
		}
		ready = append(ready, j)
	}
	// Send the batch with the worker pool, then record every outcome in
	// one transaction.
	outs := make([]fleet.Outcome, len(ready))
	idx := make(chan int)
	var wg sync.WaitGroup
	for range min(s.opts.Workers, len(ready)) {
		wg.Go(func() {
			for i := range idx {
				outs[i] = s.send(ctx, ready[i])
			}
		})
	}
	for i := range ready {
		idx <- i
	}
	close(idx)
	wg.Wait()
	if ctx.Err() != nil {
		return 0, len(jobs), nil // stopping: the leases lapse and the attempts are made again
	}
	n, err := s.svc.FinishDeliveries(context.WithoutCancel(ctx), ready, outs)
	return n, len(jobs), err
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
		out.Err = describeSendError(err)
		return out
	}
	io.Copy(io.Discard, io.LimitReader(res.Body, 64<<10))
	res.Body.Close()
	out.Status = res.StatusCode
	switch res.StatusCode {
	case http.StatusTooManyRequests, http.StatusBadGateway, http.StatusGatewayTimeout:
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

func describeSendError(err error) string {
	var ne net.Error
	switch {
	case errors.Is(err, errForbiddenAddr):
		return "The endpoint's address is not allowed (loopback, private, link-local, multicast or unspecified)."
	case errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ne) && ne.Timeout():
		return "The endpoint did not answer within 15 seconds."
	case errors.Is(err, syscall.ECONNREFUSED):
		return "The endpoint refused the connection."
	}
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) {
		return "The endpoint's host does not resolve."
	}
	return "The request to the endpoint failed."
}

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
