package fleet

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Webhook is an endpoint that receives the account's events. Secret and
// the previous secret (kept for 24 hours after a rotation) sign deliveries;
// they never appear in the endpoint's JSON. They hold what the store keeps:
// sealed under the service's SecretKeys when it has them (see
// WebhookOptions.SecretKeys); the service's use cases return endpoints
// without them, and a secret in plain text only on create and
// rotate_secret (WebhookWithSecret).
type Webhook struct {
	ID          string    `json:"webhook_id"`
	AccountID   string    `json:"-"`
	URL         string    `json:"url"`
	Events      []string  `json:"events"` // event types, or ["*"]
	Description string    `json:"description"`
	Enabled     bool      `json:"enabled"`
	CreatedAt   time.Time `json:"created_at"`

	Secret              string     `json:"-"`
	PreviousSecret      string     `json:"-"` // "" when none
	PreviousSecretUntil *time.Time `json:"-"`
	// FailingSince is the time of the first failed attempt since the
	// endpoint last succeeded (nil while it succeeds).
	FailingSince *time.Time `json:"-"`
}

// WebhookWithSecret is an endpoint with its secret: the answer to create
// and rotate_secret, the only times the secret is shown.
type WebhookWithSecret struct {
	Webhook
	Secret string `json:"secret"`
}

// Accepts reports whether the endpoint takes events of type typ.
func (w *Webhook) Accepts(typ string) bool {
	if typ == EventWebhookTest {
		return false // only the endpoint under test gets its test event
	}
	for _, t := range w.Events {
		if t == "*" || t == typ {
			return true
		}
	}
	return false
}

// SigningSecrets returns the secrets that sign a delivery at now: the
// current one, and the previous one for 24 hours after a rotation.
func (w *Webhook) SigningSecrets(now time.Time) []string {
	out := []string{w.Secret}
	if w.PreviousSecret != "" && w.PreviousSecretUntil != nil && now.Before(*w.PreviousSecretUntil) {
		out = append(out, w.PreviousSecret)
	}
	return out
}

// Webhook limits and timings.
const (
	WebhookSecretPrefix   = "whsec_"
	MaxWebhookURLLen      = 2048
	MaxWebhookDescription = 500
	// SecretOverlap is how long the old secret keeps signing after a rotation.
	SecretOverlap = 24 * time.Hour
	// WebhookTimeout is how long a receiver has to answer.
	WebhookTimeout = 15 * time.Second
	// WebhookDisableAfter is how long an endpoint may fail every delivery
	// before it is disabled.
	WebhookDisableAfter = 5 * 24 * time.Hour
	// SignatureTolerance is how far a receiver should accept a timestamp
	// from its own clock.
	SignatureTolerance = 5 * time.Minute
)

// NewWebhookSecret returns "whsec_" + base64 of 32 random bytes.
func NewWebhookSecret() string {
	var b [32]byte
	rand.Read(b[:])
	return WebhookSecretPrefix + base64.StdEncoding.EncodeToString(b[:])
}

// webhookKey is the HMAC key of a secret: the base64-decoded part after
// "whsec_".
func webhookKey(secret string) ([]byte, error) {
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, WebhookSecretPrefix))
	if err != nil || len(key) == 0 {
		return nil, errors.New("fleet: malformed webhook secret")
	}
	return key, nil
}

// SignWebhook returns the value of the webhook-signature header for a
// delivery, per the Standard Webhooks specification: for each secret
// "v1," + base64(HMAC-SHA256(key, id + "." + timestamp + "." + body)),
// space-separated.
func SignWebhook(secrets []string, id string, timestamp int64, body []byte) (string, error) {
	sigs := make([]string, 0, len(secrets))
	for _, s := range secrets {
		key, err := webhookKey(s)
		if err != nil {
			return "", err
		}
		sigs = append(sigs, "v1,"+base64.StdEncoding.EncodeToString(webhookMAC(key, id, timestamp, body)))
	}
	return strings.Join(sigs, " "), nil
}

func webhookMAC(key []byte, id string, timestamp int64, body []byte) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(id))
	m.Write([]byte{'.'})
	m.Write(strconv.AppendInt(nil, timestamp, 10))
	m.Write([]byte{'.'})
	m.Write(body)
	return m.Sum(nil)
}

// Errors of VerifyWebhook.
var (
	ErrWebhookSignature = errors.New("fleet: no matching webhook signature")
	ErrWebhookTimestamp = errors.New("fleet: webhook timestamp outside the tolerance")
)

// VerifyWebhook checks a received delivery, as a receiver does: the
// timestamp (Unix seconds, as sent in webhook-timestamp) must be within
// SignatureTolerance of now, and one of the space-separated v1 signatures
// must be the HMAC of id, timestamp and body under secret.
func VerifyWebhook(secret, id, timestamp, signature string, body []byte, now time.Time) error {
	ts, err := strconv.ParseInt(timestamp, 10, 64)
	if err != nil {
		return ErrWebhookTimestamp
	}
	if d := now.Sub(time.Unix(ts, 0)); d > SignatureTolerance || d < -SignatureTolerance {
		return ErrWebhookTimestamp
	}
	key, err := webhookKey(secret)
	if err != nil {
		return err
	}
	want := webhookMAC(key, id, ts, body)
	for _, sig := range strings.Fields(signature) {
		v, b64, ok := strings.Cut(sig, ",")
		if !ok || v != "v1" {
			continue
		}
		got, err := base64.StdEncoding.DecodeString(b64)
		if err == nil && hmac.Equal(got, want) {
			return nil
		}
	}
	return ErrWebhookSignature
}

// retrySchedule is the Standard Webhooks schedule: the delay before each
// attempt, the first being immediate.
var retrySchedule = []time.Duration{
	0, 5 * time.Second, 5 * time.Minute, 30 * time.Minute, 2 * time.Hour,
	5 * time.Hour, 10 * time.Hour, 14 * time.Hour, 20 * time.Hour, 24 * time.Hour,
}

// MaxAttempts is how many attempts a delivery gets before it fails.
var MaxAttempts = len(retrySchedule)

// RetryDelay returns how long after failed attempt number attempt (from 1)
// the next one is made, and false when there is none. jitter, in [0, 1),
// stretches the delay by up to 10% so that retries of many deliveries do
// not arrive together.
func RetryDelay(attempt int, jitter float64) (time.Duration, bool) {
	if attempt < 1 || attempt >= len(retrySchedule) {
		return 0, false
	}
	d := retrySchedule[attempt]
	jitter = min(max(jitter, 0), 1)
	return d + time.Duration(float64(d)*0.1*jitter), true
}

// MaxRetryAfter caps a receiver's Retry-After.
const MaxRetryAfter = 24 * time.Hour

// HonoursRetryAfter reports whether a receiver's Retry-After is honoured
// with the status it came with: 429, 502, 503 and 504 (RFC 9110 pairs it
// with 429 and 503). The retry waits for it, capped at MaxRetryAfter.
func HonoursRetryAfter(status int) bool {
	switch status {
	case 429, 502, 503, 504:
		return true
	}
	return false
}

// DeliveryStatus is the state of one attempt.
type DeliveryStatus string

const (
	DeliveryPending   DeliveryStatus = "pending"
	DeliverySucceeded DeliveryStatus = "succeeded"
	DeliveryFailed    DeliveryStatus = "failed"
)

var deliveryStatuses = []DeliveryStatus{DeliveryPending, DeliverySucceeded, DeliveryFailed}

// DeliveryStatuses lists every delivery status.
func DeliveryStatuses() []DeliveryStatus { return slices.Clone(deliveryStatuses) }

// Valid reports whether s is a known status.
func (s DeliveryStatus) Valid() bool { return slices.Contains(deliveryStatuses, s) }

// Delivery is one attempt to deliver an event to an endpoint. A pending
// delivery is an attempt yet to be made at NextAttemptAt; once made it
// records the outcome, and a failed one that may be retried names when the
// next attempt (a new pending delivery) is due.
type Delivery struct {
	ID             string         `json:"delivery_id"`
	AccountID      string         `json:"-"`
	WebhookID      string         `json:"webhook_id"`
	EventID        string         `json:"event_id"`
	Attempt        int            `json:"attempt"`
	Status         DeliveryStatus `json:"status"`
	ResponseStatus *int           `json:"response_status"`
	Error          *string        `json:"error"`
	DurationMs     *int64         `json:"duration_ms"`
	NextAttemptAt  *time.Time     `json:"next_attempt_at"`
	CreatedAt      time.Time      `json:"created_at"`
}

// DeliveryFilter selects deliveries in a list.
type DeliveryFilter struct {
	Status  DeliveryStatus // "" for any
	EventID string         // "" for any
}

// Match reports whether d passes the filter.
func (f DeliveryFilter) Match(d *Delivery) bool {
	return (f.Status == "" || d.Status == f.Status) && (f.EventID == "" || d.EventID == f.EventID)
}

// validate checks an endpoint's fields; insecure allows http and private
// addresses.
func (w *Webhook) validate(val *Validator, insecure bool) {
	if _, err := CheckWebhookURL(w.URL, insecure); err != nil {
		val.Add("url", "%s", err.Error())
	}
	val.Check(len(w.Description) <= MaxWebhookDescription, "description", "must be at most %d characters", MaxWebhookDescription)
	val.MultilineText("description", w.Description)
	switch {
	case len(w.Events) == 0:
		val.Add("events", "must name at least one event type, or be [\"*\"]")
	case slices.Contains(w.Events, "*") && len(w.Events) > 1:
		val.Add("events", "\"*\" must be the only entry")
	default:
		for i, t := range w.Events {
			if t != "*" && !ValidEventType(t) {
				val.Add("events["+itoa(i)+"]", "unknown event type %q", t)
			}
		}
	}
}

// errUnusableWebhookHost is the one answer for a host that cannot receive
// webhooks, whatever the reason (a forbidden address literal, a name that
// resolves to a forbidden address or does not resolve), so that it tells a
// caller nothing about which names resolve inside the provider's network.
// What is wrong with a URL's form (not https, user information, a bad
// port...) says so: that tells nothing about the network.
var errUnusableWebhookHost = errors.New("cannot be used as a webhook endpoint: it must be an https URL on a public host")

// CheckWebhookURL parses an endpoint URL and refuses what could reach the
// provider's own network: schemes other than https, user info, and hosts
// that are a forbidden address written in any form (dotted, IPv6, IPv4
// mapped into IPv6, or the decimal, octal and hex forms some resolvers
// accept). insecure allows http and every address. A host name is not
// resolved here: the caller resolves it, and the sender checks the address
// it connects to.
func CheckWebhookURL(raw string, insecure bool) (*url.URL, error) {
	if len(raw) > MaxWebhookURLLen {
		return nil, errors.New("must be at most 2048 characters")
	}
	u, err := url.Parse(raw)
	if err != nil || !u.IsAbs() || u.Opaque != "" {
		return nil, errors.New("must be an absolute URL")
	}
	switch {
	case u.Scheme == "https":
	case u.Scheme == "http" && insecure:
	default:
		return nil, errors.New("must use https")
	}
	if u.User != nil {
		return nil, errors.New("must not carry user information")
	}
	host := u.Hostname()
	if host == "" {
		return nil, errors.New("must name a host")
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return nil, errors.New("must have a valid port")
		}
	}
	if u.Fragment != "" {
		return nil, errors.New("must not have a fragment")
	}
	if insecure {
		return u, nil
	}
	if addr, err := netip.ParseAddr(host); err == nil {
		if addr.Zone() != "" {
			return nil, errors.New("must not name an address zone")
		}
		if ForbiddenAddr(addr) {
			return nil, errUnusableWebhookHost
		}
		return u, nil
	}
	if numericHost(host) {
		return nil, errors.New("must write an IP address in its standard form")
	}
	return u, nil
}

// numericHost reports whether a host that is no standard IP literal would
// still be read as an IPv4 address by some resolver or URL parser: its last
// label is a number (decimal, octal or 0x-hex), as in "2130706433",
// "0x7f.1" or "127.1".
func numericHost(host string) bool {
	host = strings.TrimSuffix(host, ".")
	labels := strings.Split(host, ".")
	last := strings.ToLower(labels[len(labels)-1])
	if last == "" {
		return true
	}
	if h, ok := strings.CutPrefix(last, "0x"); ok {
		for _, c := range h {
			if !strings.ContainsRune("0123456789abcdef", c) {
				return false
			}
		}
		return true
	}
	for _, c := range last {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

var forbiddenPrefixes = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),       // "this network"
	netip.MustParsePrefix("100.64.0.0/10"),   // carrier-grade NAT
	netip.MustParsePrefix("192.0.0.0/24"),    // IETF protocol assignments
	netip.MustParsePrefix("198.18.0.0/15"),   // benchmarking
	netip.MustParsePrefix("240.0.0.0/4"),     // reserved, and broadcast
	netip.MustParsePrefix("::/96"),           // IPv4-compatible (deprecated)
	netip.MustParsePrefix("::ffff:0:0:0/96"), // IPv4-translated (SIIT) of any IPv4 address
	netip.MustParsePrefix("2001::/32"),       // Teredo: tunnels to any IPv4 address
	netip.MustParsePrefix("64:ff9b::/96"),    // NAT64 of any IPv4 address
	netip.MustParsePrefix("64:ff9b:1::/48"),  // local-use NAT64
	netip.MustParsePrefix("2002::/16"),       // 6to4 of any IPv4 address
	netip.MustParsePrefix("fec0::/10"),       // site-local (deprecated)
	netip.MustParsePrefix("100::/64"),        // discard-only
	netip.MustParsePrefix("2001:db8::/32"),   // documentation
	netip.MustParsePrefix("192.0.2.0/24"),    // documentation
	netip.MustParsePrefix("198.51.100.0/24"), // documentation
	netip.MustParsePrefix("203.0.113.0/24"),  // documentation
}

// ForbiddenAddr reports whether a webhook may not be delivered to addr:
// loopback, private (RFC 1918, fc00::/7), link-local (169.254.0.0/16,
// fe80::/10), multicast, unspecified, carrier-grade NAT and other special
// ranges, including any of these mapped into IPv6, and the IPv6 ranges
// that embed or tunnel to an IPv4 address (IPv4-compatible, IPv4-translated,
// NAT64, 6to4, Teredo), whatever that address.
func ForbiddenAddr(addr netip.Addr) bool {
	if !addr.IsValid() {
		return true
	}
	addr = addr.Unmap()
	if addr.IsLoopback() || addr.IsPrivate() || addr.IsLinkLocalUnicast() || addr.IsLinkLocalMulticast() ||
		addr.IsInterfaceLocalMulticast() || addr.IsMulticast() || addr.IsUnspecified() {
		return true
	}
	for _, p := range forbiddenPrefixes {
		if p.Contains(addr) {
			return true
		}
	}
	return false
}

// DeliveryJob is a claimed delivery with what the sender needs to make it.
// Lease is the claim: the delivery is the sender's until then, and its
// outcome is recorded only while the claim holds.
type DeliveryJob struct {
	Delivery Delivery
	URL      string
	Secrets  []string
	Body     []byte // the event's JSON
	Lease    time.Time
}

// Outcome is what one attempt found.
type Outcome struct {
	// Status is the receiver's HTTP status; 0 when none came back.
	Status int
	// Err says why the attempt failed without a status ("" otherwise).
	Err      string
	Duration time.Duration
	// RetryAfter is the receiver's Retry-After on 429, 502, 503 or 504 (0 if
	// none).
	RetryAfter time.Duration
	// Jitter in [0, 1) spreads the next attempt (see RetryDelay).
	Jitter float64
}

// Succeeded reports whether the receiver took the event: a 2xx.
func (o Outcome) Succeeded() bool { return o.Status >= 200 && o.Status < 300 }

// eventBody is the JSON a delivery posts: the event as the API shows it.
func eventBody(e Event) ([]byte, error) { return json.Marshal(e) }
