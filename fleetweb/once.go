package fleetweb

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"sync"
	"time"
)

// A form that makes a secret (a new key, a rotated key, a sign-in link) is
// answered with a redirect (post/redirect/get), so that reloading or going
// back never makes a second one. The secret waits for the page the
// redirect leads to in a onceStore: in this process's memory, for the
// session that made it, taken by the first view of that page, and gone
// after onceTTL whether viewed or not.

// onceTTL is how long a secret waits for its page.
const onceTTL = 5 * time.Minute

// maxOnce bounds how many secrets wait at once; past it the one closest to
// its end is dropped.
const maxOnce = 10_000

type onceStore struct {
	mu    sync.Mutex
	items map[string]onceItem
}

type onceItem struct {
	session [32]byte // the SHA-256 of the session's secret
	until   time.Time
	value   any
}

func newOnceStore() *onceStore { return &onceStore{items: map[string]onceItem{}} }

// put keeps v for the session until now+onceTTL and returns the token that
// takes it.
func (o *onceStore) put(session string, now time.Time, v any) string {
	var b [18]byte
	rand.Read(b[:])
	token := base64.RawURLEncoding.EncodeToString(b[:])
	o.mu.Lock()
	defer o.mu.Unlock()
	for t, it := range o.items {
		if !now.Before(it.until) {
			delete(o.items, t)
		}
	}
	if len(o.items) >= maxOnce {
		first := ""
		for t, it := range o.items {
			if first == "" || it.until.Before(o.items[first].until) {
				first = t
			}
		}
		delete(o.items, first)
	}
	o.items[token] = onceItem{session: sha256.Sum256([]byte(session)), until: now.Add(onceTTL), value: v}
	return token
}

// take returns what token holds and forgets it, when the token is the
// session's and has not expired; another session learns nothing and takes
// nothing.
func (o *onceStore) take(session, token string, now time.Time) (any, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	it, ok := o.items[token]
	if !ok || it.session != sha256.Sum256([]byte(session)) {
		return nil, false
	}
	delete(o.items, token)
	if !now.Before(it.until) {
		return nil, false
	}
	return it.value, true
}

// shownOnce keeps v for the page the redirect of r's form leads to, and
// returns the token that page takes it with.
func (h *Handler) shownOnce(r *http.Request, v any) string {
	return h.once.put(h.sessionSecret(r), h.svc.Now(), v)
}

// takeShown takes what the page's ?shown= token holds for r's session.
// It reports whether the page had a token at all, so that a page viewed
// again can say that its secret was shown once.
func (h *Handler) takeShown(r *http.Request) (v any, ok, had bool) {
	token := r.URL.Query().Get("shown")
	if token == "" {
		return nil, false, false
	}
	v, ok = h.once.take(h.sessionSecret(r), token, h.svc.Now())
	return v, ok, true
}

// noticeOnce keeps a notice for the page the redirect of r's form leads
// to, as shownOnce keeps a secret, and returns the token its ?notice=
// takes it with: a notice that names what the form changed, shown once,
// to the session that made it only.
func (h *Handler) noticeOnce(r *http.Request, v any) string {
	return h.once.put(h.sessionSecret(r), h.svc.Now(), v)
}

// takeNotice takes what the page's ?notice= token holds for r's session.
func (h *Handler) takeNotice(r *http.Request) (any, bool) {
	token := r.URL.Query().Get("notice")
	if token == "" {
		return nil, false
	}
	return h.once.take(h.sessionSecret(r), token, h.svc.Now())
}

// takeOnce takes what a page's ?shown= and ?notice= tokens hold for r's
// session: the value shown once (nil when none), whether the page had
// shown it already (viewed again), and the notice, which it sets on p.
func (h *Handler) takeOnce(r *http.Request, p *page) (shown any, gone bool) {
	if v, ok, had := h.takeShown(r); ok {
		shown = v
	} else if had {
		gone = true
	}
	if v, ok := h.takeNotice(r); ok {
		if s, ok := v.(string); ok {
			p.Notice = s
		}
	}
	return shown, gone
}
