package fleet

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/fleetkit/fleetapi/fleet/internal/broker"
)

// CreateShareLink makes a link that shows one of the account's vehicles on
// a public page until in.ExpiresAt (after now, at most MaxShareLinkTTL
// ahead; validation_error naming expires_at otherwise). A vehicle that is
// not the account's is not_found; a vehicle with MaxActiveShareLinks active
// links already is conflict. The token is in the result, the only time it
// is shown.
func (s *Service) CreateShareLink(ctx context.Context, p Principal, in ShareLinkInput) (NewShareLink, error) {
	if err := p.allow("CreateShareLink"); err != nil {
		return NewShareLink{}, err
	}
	now := s.Now()
	if err := in.validate(now); err != nil {
		return NewShareLink{}, err
	}
	token := newShareToken()
	l := ShareLink{ID: NewID(PrefixShareLink), AccountID: p.Account.ID, VehicleID: in.VehicleID,
		Hash: HashShareToken(token), CreatedAt: now, ExpiresAt: Timestamp(*in.ExpiresAt)}
	err := s.update(ctx, func(tx Tx) error {
		if _, err := s.getVehicle(tx, p, in.VehicleID); err != nil {
			return err
		}
		active, err := tx.ShareLinks(p.Account.ID, ShareLinkFilter{VehicleID: in.VehicleID, Status: ShareLinkActive, Now: now},
			Page{Limit: MaxActiveShareLinks})
		if err != nil {
			return err
		}
		if len(active) >= MaxActiveShareLinks {
			return Errorf(CodeConflict, "A vehicle may have at most %d active share links and this one has %d; revoke one first.",
				MaxActiveShareLinks, len(active))
		}
		return tx.CreateShareLink(l)
	})
	if err != nil {
		return NewShareLink{}, err
	}
	return NewShareLink{Link: l, Token: token}, nil
}

// ListShareLinks lists the account's share links that f selects (its Now
// is the service's clock), oldest first. A filter value that names no
// vehicle or status is invalid_request.
func (s *Service) ListShareLinks(ctx context.Context, p Principal, f ShareLinkFilter, q ListQuery) (List[ShareLink], error) {
	if err := p.allow("ListShareLinks"); err != nil {
		return List[ShareLink]{}, err
	}
	if err := f.check(); err != nil {
		return List[ShareLink]{}, err
	}
	f.Now = s.Now()
	page, limit, err := q.page(PrefixShareLink, DefaultPageLimit, MaxPageLimit)
	if err != nil {
		return List[ShareLink]{}, err
	}
	var ls []ShareLink
	err = s.view(ctx, func(tx Tx) (err error) { ls, err = tx.ShareLinks(p.Account.ID, f, page); return err })
	if err != nil {
		return List[ShareLink]{}, err
	}
	return finish(ls, limit, func(l ShareLink) string { return l.ID }), nil
}

// ShareLink returns one of the account's share links.
func (s *Service) ShareLink(ctx context.Context, p Principal, id string) (ShareLink, error) {
	if err := p.allow("ShareLink"); err != nil {
		return ShareLink{}, err
	}
	var l ShareLink
	err := s.view(ctx, func(tx Tx) (err error) { l, err = getShareLink(tx, p, id); return err })
	return l, err
}

func getShareLink(tx ShareLinkTx, p Principal, id string) (ShareLink, error) {
	if !ValidID(PrefixShareLink, id) {
		return ShareLink{}, NotFound("share link", id)
	}
	l, err := tx.ShareLink(p.Account.ID, id)
	if ErrorCode(err) == CodeNotFound {
		return ShareLink{}, NotFound("share link", id)
	}
	return l, err
}

// RevokeShareLink ends a share link now: its page answers as an unknown
// link's does, this service ends its open streams at once, and every other
// service sharing the store within CheckShareStreams' period. Revoking a
// link that is revoked or expired changes nothing.
func (s *Service) RevokeShareLink(ctx context.Context, p Principal, id string) (ShareLink, error) {
	if err := p.allow("RevokeShareLink"); err != nil {
		return ShareLink{}, err
	}
	now := s.Now()
	var l ShareLink
	err := s.update(ctx, func(tx Tx) (err error) {
		l, err = getShareLink(tx, p, id)
		if err != nil || l.Status(now) != ShareLinkActive {
			return err
		}
		l.RevokedAt = &now
		return tx.UpdateShareLink(l)
	})
	if err != nil {
		return ShareLink{}, err
	}
	s.shares.end(l.ID, ErrShareLinkEnded)
	return l, nil
}

// ErrShareLinkEnded is the reason of a share stream ended because its link
// expired, was revoked, or its vehicle was deleted.
var ErrShareLinkEnded = errors.New("fleet: the share link has expired or been revoked")

// SharedVehicle is what the public page of a share link shows, and
// nothing more: no id, no other vehicle, nothing else of the account.
type SharedVehicle struct {
	CompanyName string
	VehicleName string
	ExpiresAt   time.Time
	// Position is the vehicle's latest report; nil before its first.
	Position *LocationRecord
	// Route is the vehicle's points since RouteFrom (the later of the
	// link's creation and the start of the viewer's day) in ascending
	// time: at most MaxShareRoutePoints, the latest when there are more
	// (RouteCut then says so).
	RouteFrom time.Time
	Route     []Point
	RouteCut  bool
}

// SharedVehicle returns what the public page of the share link whose token
// is token shows, its route beginning no earlier than the start of the
// current day in loc (the viewer's time zone; UTC when nil). A token that
// shows nothing — malformed, unknown, expired, revoked — is not_found, the
// same error for each, so that tokens cannot be probed; a malformed one is
// refused without a store lookup.
func (e Edge) SharedVehicle(ctx context.Context, token string, loc *time.Location) (SharedVehicle, error) {
	s := e.s
	if !checkShareToken(token) {
		return SharedVehicle{}, errNoShareLink()
	}
	if loc == nil {
		loc = time.UTC
	}
	now := s.Now()
	var out SharedVehicle
	err := s.view(ctx, func(tx Tx) error {
		l, a, v, err := activeShareLink(tx, HashShareToken(token), now)
		if err != nil {
			return err
		}
		out = SharedVehicle{CompanyName: a.CompanyName, VehicleName: v.Name, ExpiresAt: l.ExpiresAt}
		if rec, ok := v.Record(); ok {
			out.Position = &rec
		}
		from := l.CreatedAt
		y, m, d := now.In(loc).Date()
		if day := time.Date(y, m, d, 0, 0, 0, 0, loc); day.After(from) {
			from = Timestamp(day)
		}
		if reach := now.Add(-a.Plan.Limits().HistoryReach); from.Before(reach) {
			from = reach
		}
		out.RouteFrom = from
		out.Route, out.RouteCut, err = sharedRoute(tx, v.ID, from, now.Add(MaxFutureSkew))
		return err
	})
	return out, err
}

// sharedRoute reads a vehicle's points from from to to: all of them when
// they are at most MaxShareRoutePoints, else the latest part that is (the
// window's later half, again and again), with cut set.
func sharedRoute(tx LocationTx, vehicleID string, from, to time.Time) (pts []Point, cut bool, err error) {
	for {
		pts, err = tx.Points(vehicleID, from, to, MaxShareRoutePoints+1)
		if err != nil || len(pts) <= MaxShareRoutePoints {
			return pts, cut, err
		}
		cut = true
		half := to.Sub(from) / 2
		if half < time.Millisecond { // cannot happen with distinct timestamps; bounds the loop all the same
			return pts[len(pts)-MaxShareRoutePoints:], cut, nil
		}
		from = Timestamp(from.Add(half))
	}
}

// activeShareLink reads the link whose token hashes to hash, with its
// account and vehicle, when it is active at now; errNoShareLink otherwise.
func activeShareLink(tx sharedTx, hash [32]byte, now time.Time) (ShareLink, Account, Vehicle, error) {
	l, err := tx.ShareLinkByHash(hash)
	if ErrorCode(err) == CodeNotFound || err == nil && l.Status(now) != ShareLinkActive {
		return ShareLink{}, Account{}, Vehicle{}, errNoShareLink()
	}
	if err != nil {
		return ShareLink{}, Account{}, Vehicle{}, err
	}
	a, err := tx.Account(l.AccountID)
	if err != nil {
		return ShareLink{}, Account{}, Vehicle{}, notFoundAsNoShareLink(err)
	}
	v, err := tx.Vehicle(l.AccountID, l.VehicleID)
	if err != nil {
		return ShareLink{}, Account{}, Vehicle{}, notFoundAsNoShareLink(err)
	}
	return l, a, v, nil
}

func notFoundAsNoShareLink(err error) error {
	if ErrorCode(err) == CodeNotFound {
		return errNoShareLink()
	}
	return err
}

// SubscribeShared follows the live location reports of the vehicle of the
// share link whose token is token: that vehicle's only. A token that shows
// nothing is not_found, as SharedVehicle answers it. A link may have
// MaxShareStreams streams open at once on this service; one more is
// rate_limit_exceeded. The subscription ends (ErrShareLinkEnded) when the
// link is revoked by this service, at once, or by another sharing the
// store, when it expires, or when its vehicle is deleted: see
// CheckShareStreams.
func (e Edge) SubscribeShared(ctx context.Context, token string) (*Subscription, error) {
	s := e.s
	if !checkShareToken(token) {
		return nil, errNoShareLink()
	}
	now := s.Now()
	var l ShareLink
	err := s.view(ctx, func(tx Tx) (err error) {
		l, _, _, err = activeShareLink(tx, HashShareToken(token), now)
		return err
	})
	if err != nil {
		return nil, err
	}
	sub, open := s.stream.Subscribe(broker.Request{
		Slot:   broker.Slot{Account: l.AccountID, Key: l.ID},
		Limit:  MaxShareStreams,
		Topics: []string{l.VehicleID},
	}, now)
	if sub == nil {
		return nil, Errorf(CodeRateLimitExceeded, "This link is open in %d places on this server, the most a link may be; close one first.", open)
	}
	s.shares.add(l, sub)
	return &Subscription{sub: sub, closed: func() { s.shares.remove(l.ID, sub) }}, nil
}

// CheckShareStreams ends the share streams open on this service whose link
// no longer stands: expired (by the clock, without a store read), or
// revoked or deleted by any service sharing the store, which it learns with
// one read of the store for all of the links (none when no share stream is
// open). Run calls it every second, so such a stream ends within about a
// second of the change. Streams whose link the store cannot be asked about
// stay open. It returns how many streams it ended.
func (j Jobs) CheckShareStreams(ctx context.Context) (int, error) {
	s := j.s
	open := s.shares.links()
	if len(open) == 0 {
		return 0, nil
	}
	now := s.Now()
	ended := 0
	ids := make([]string, 0, len(open))
	for _, w := range open {
		if !now.Before(w.expiresAt) {
			ended += s.shares.end(w.id, ErrShareLinkEnded)
			continue
		}
		ids = append(ids, w.id)
	}
	if len(ids) == 0 {
		return ended, nil
	}
	var ls []ShareLink
	if err := s.view(ctx, func(tx Tx) (err error) { ls, err = tx.ShareLinksByID(ids); return err }); err != nil {
		return ended, err
	}
	standing := make(map[string]bool, len(ls))
	for _, l := range ls {
		standing[l.ID] = l.Status(now) == ShareLinkActive
	}
	for _, id := range ids {
		if !standing[id] {
			ended += s.shares.end(id, ErrShareLinkEnded)
		}
	}
	return ended, nil
}

// OpenShareStreams returns how many share streams are open on this
// service.
func (j Jobs) OpenShareStreams() int { return j.s.shares.count() }

// shareStreams are the share streams open on a service, by link, so that a
// link's streams end together.
type shareStreams struct {
	mu sync.Mutex
	m  map[string]*shareWatch
}

type shareWatch struct {
	id, accountID, vehicleID string
	expiresAt                time.Time
	subs                     map[*broker.Subscription[StreamItem]]struct{}
}

func (r *shareStreams) add(l ShareLink, sub *broker.Subscription[StreamItem]) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.m == nil {
		r.m = map[string]*shareWatch{}
	}
	w := r.m[l.ID]
	if w == nil {
		w = &shareWatch{id: l.ID, accountID: l.AccountID, vehicleID: l.VehicleID, expiresAt: l.ExpiresAt,
			subs: map[*broker.Subscription[StreamItem]]struct{}{}}
		r.m[l.ID] = w
	}
	w.subs[sub] = struct{}{}
}

func (r *shareStreams) remove(id string, sub *broker.Subscription[StreamItem]) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if w := r.m[id]; w != nil {
		delete(w.subs, sub)
		if len(w.subs) == 0 {
			delete(r.m, id)
		}
	}
	if len(r.m) == 0 {
		r.m = nil // start afresh: a map keeps its size after deletes
	}
}

// links returns the links with open streams (their id and expiry).
func (r *shareStreams) links() []shareWatch {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]shareWatch, 0, len(r.m))
	for _, w := range r.m {
		out = append(out, shareWatch{id: w.id, expiresAt: w.expiresAt})
	}
	return out
}

// end ends the streams of link id with why, and returns how many.
func (r *shareStreams) end(id string, why error) int {
	r.mu.Lock()
	w := r.m[id]
	delete(r.m, id)
	r.mu.Unlock()
	if w == nil {
		return 0
	}
	for sub := range w.subs {
		sub.End(why)
	}
	return len(w.subs)
}

// endVehicle ends the streams of the links of an account's vehicle.
func (r *shareStreams) endVehicle(accountID, vehicleID string, why error) int {
	r.mu.Lock()
	var ids []string
	for id, w := range r.m {
		if w.accountID == accountID && w.vehicleID == vehicleID {
			ids = append(ids, id)
		}
	}
	r.mu.Unlock()
	n := 0
	for _, id := range ids {
		n += r.end(id, why)
	}
	return n
}

func (r *shareStreams) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, w := range r.m {
		n += len(w.subs)
	}
	return n
}
