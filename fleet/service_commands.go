package fleet

import (
	"context"
	"errors"
	"sync"
	"time"
)

// The commands' use cases (API.md §16) and what the listeners call to
// deliver them.
//
// # Delivery
//
// A command is queued in the store with its device. The listener that
// holds the device's connection (on any server) claims the device's queued
// commands in one write transaction (DeviceEdge.ClaimCommands), which moves
// each due one from queued to sent: on a store shared by several servers
// the transaction is serialisable, so two servers racing to claim one
// command deliver it once. The listener then encodes and writes it, and
// reports what became of it: the device's answer (CommandAnswered), a
// failure (CommandFailed), or a connection that closed before the write
// (CommandUnsent, which queues it again).
//
// A listener claims when its device logs in, when the service wakes it
// (WatchCommands: a command created on this server, or announced by another
// through the store's CommandFeed), and after a report while the device has
// a command held (an engine_stop waiting for the vehicle to slow down).
// OsmAnd, whose devices hold no connection, claims in the answer to each
// report of a device this service knows may have commands queued
// (CommandsPending), so that the report path reads nothing more for the
// others.

// commandEmitTx is what changing a command needs: the command, its device
// and the events of the change.
type commandEmitTx interface {
	CommandTx
	DeviceTx
	emitTx
}

func notFoundCommand(id string) error { return NotFound("command", id) }

// commandEvent is the event a status change of a command emits ("" for
// none: cancelled, or queued again).
func commandEvent(st CommandStatus) string {
	switch st {
	case CommandQueued:
		return EventCommandQueued
	case CommandSent:
		return EventCommandSent
	case CommandDelivered:
		return EventCommandDelivered
	case CommandFailed:
		return EventCommandFailed
	case CommandExpired:
		return EventCommandExpired
	}
	return ""
}

// moveCommand moves c to status to at now (error becomes its error unless
// "" keeps it), stores it and emits its event.
func (s *Service) moveCommand(tx commandEmitTx, c *Command, to CommandStatus, reason string, now time.Time) error {
	if !c.Status.CanMove(to) {
		return errCommandMove(c.Status, to)
	}
	c.Status = to
	if reason != "" {
		c.Error = clip(reason, MaxCommandError)
	}
	switch to {
	case CommandSent:
		c.SentAt = &now
	case CommandDelivered:
		c.DeliveredAt = &now
		c.Error = ""
	case CommandQueued:
		c.SentAt = nil
	default:
		c.FinishedAt = &now
	}
	if err := tx.UpdateCommand(*c); err != nil {
		return err
	}
	if typ := commandEvent(to); typ != "" && to != CommandQueued {
		return s.emit(tx, c.AccountID, typ, now, *c)
	}
	return nil
}

// clip cuts s to at most n bytes, at a character's start.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xc0 == 0x80 {
		n--
	}
	return s[:n]
}

func (s *Service) getCommand(tx CommandTx, p Principal, id string) (Command, error) {
	if !ValidID(PrefixCommand, id) {
		return Command{}, notFoundCommand(id)
	}
	c, err := tx.Command(p.Account.ID, id)
	if ErrorCode(err) == CodeNotFound {
		return Command{}, notFoundCommand(id)
	}
	return c, err
}

// CreateCommand queues a command to one of the account's devices (API.md
// §16). The input is checked against the rules of the type (validation_error
// naming every bad field) and against the protocol the device last spoke,
// when the service knows what it can carry (Options.Protocols): a type it
// cannot carry is conflict naming those it can, a custom text over its
// length is validation_error. An engine_stop or engine_resume cancels the
// device's queued command of the other kind (the later wins). An
// engine_stop is held while the device's latest report shows
// EngineStopMaxSpeed or more, unless Force (recorded): it stays queued with
// the reason in Error. The command.queued event carries the command and
// its creator. A device has at most MaxQueuedCommands queued (conflict).
func (s *Service) CreateCommand(ctx context.Context, p Principal, deviceID string, in CommandInput) (Command, error) {
	if err := p.allow("CreateCommand"); err != nil {
		return Command{}, err
	}
	now := s.Now()
	var c Command
	err := s.update(ctx, func(tx Tx) error {
		d, err := s.getDevice(tx, p, deviceID)
		if err != nil {
			return err
		}
		var pc *ProtocolCommands
		if d.Protocol != "" {
			if v, ok := s.opts.Protocols[d.Protocol]; ok {
				pc = &v
			}
		}
		c, err = in.build(d.Protocol, pc, now)
		if err != nil {
			return err
		}
		if check := s.opts.CheckCommand; check != nil && pc != nil {
			if field, problem := check(d.Protocol, c.claimed()); field != "" {
				var val Validator
				val.Add(field, "%s (%s)", problem, d.Protocol)
				return val.Err()
			}
		}
		c.ID, c.AccountID, c.DeviceID, c.CreatedBy, c.CreatedAt = NewID(PrefixCommand), d.AccountID, d.ID, p.Key.ID, now
		queued, err := tx.DeviceCommands(d.AccountID, d.ID, CommandQueued, MaxQueuedCommands+1)
		if err != nil {
			return err
		}
		if c.IsEngine() {
			kept := queued[:0]
			for i := range queued {
				q := queued[i]
				if q.IsEngine() && q.Type != c.Type {
					if err := s.moveCommand(tx, &q, CommandCancelled, "Cancelled: "+c.ID+", an "+c.Type+" queued later, replaces it.", now); err != nil {
						return err
					}
					continue
				}
				kept = append(kept, q)
			}
			queued = kept
		}
		if len(queued) >= MaxQueuedCommands {
			return Errorf(CodeConflict, "The device has %d commands queued already, the most it may have; cancel one or wait for the device.", len(queued))
		}
		if v, held := c.holds(d.LastReport); held {
			c.Error = heldReason(v)
		}
		if err := tx.CreateCommand(c); err != nil {
			return err
		}
		return s.emit(tx, c.AccountID, EventCommandQueued, now, c)
	})
	if err != nil {
		return Command{}, err
	}
	s.cmds.wake(c.DeviceID)
	return c, nil
}

// Command returns one of the account's commands.
func (s *Service) Command(ctx context.Context, p Principal, id string) (Command, error) {
	if err := p.allow("Command"); err != nil {
		return Command{}, err
	}
	var c Command
	err := s.view(ctx, func(tx Tx) (err error) { c, err = s.getCommand(tx, p, id); return err })
	return c, err
}

// ListCommands lists the commands of one of the account's devices, newest
// first; f.Status, when set, must be a status (invalid_request otherwise).
func (s *Service) ListCommands(ctx context.Context, p Principal, deviceID string, f CommandFilter, q ListQuery) (List[Command], error) {
	if err := p.allow("ListCommands"); err != nil {
		return List[Command]{}, err
	}
	if f.Status != "" && !f.Status.Valid() {
		return List[Command]{}, Errorf(CodeInvalidRequest, "status must be one of queued, sent, delivered, failed, expired, cancelled.")
	}
	q.Newest = true
	page, limit, err := q.pageEitherOrder(PrefixCommand, DefaultPageLimit, MaxPageLimit)
	if err != nil {
		return List[Command]{}, err
	}
	var cs []Command
	err = s.view(ctx, func(tx Tx) error {
		d, err := s.getDevice(tx, p, deviceID)
		if err != nil {
			return err
		}
		cs, err = tx.Commands(d.AccountID, d.ID, f, page)
		return err
	})
	if err != nil {
		return List[Command]{}, err
	}
	return finish(cs, limit, func(c Command) string { return c.ID }), nil
}

// CancelCommand cancels a queued command; one in any other status is
// invalid_state_transition naming it.
func (s *Service) CancelCommand(ctx context.Context, p Principal, id string) (Command, error) {
	if err := p.allow("CancelCommand"); err != nil {
		return Command{}, err
	}
	now := s.Now()
	var c Command
	err := s.update(ctx, func(tx Tx) (err error) {
		c, err = s.getCommand(tx, p, id)
		if err != nil {
			return err
		}
		return s.moveCommand(tx, &c, CommandCancelled, "Cancelled by "+p.Key.ID+".", now)
	})
	return c, err
}

// deleteCommands deletes a device's commands, in its deletion's
// transaction.
func deleteCommands(tx CommandTx, accountID, deviceID string) error {
	_, err := tx.DeleteCommands(accountID, deviceID)
	return err
}

// commandWaiters are the listeners of this service waiting for their
// device's commands, by device id, and the devices that may have commands
// queued (pending: a count that moves with each wake, so that a claim that
// read the queue before a wake does not forget it).
type commandWaiters struct {
	mu      sync.Mutex
	waiters map[string]map[chan struct{}]struct{}
	pending map[string]uint64
	// following is closed once the service follows the store's
	// CommandFeed.
	following chan struct{}
	followed  bool
}

func (w *commandWaiters) init() {
	w.waiters = map[string]map[chan struct{}]struct{}{}
	w.pending = map[string]uint64{}
	w.following = make(chan struct{})
}

// wakeAll wakes every waiter, and marks the service as following.
func (w *commandWaiters) wakeAll() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.followed {
		w.followed = true
		close(w.following)
	}
	for id, m := range w.waiters {
		w.pending[id]++
		for ch := range m {
			select {
			case ch <- struct{}{}:
			default:
			}
		}
	}
}

// maxPendingDevices bounds the devices marked pending; past it the marks
// are forgotten (a device's next login or command marks it again).
const maxPendingDevices = 1_000_000

// wake marks the device pending and wakes its waiters.
func (w *commandWaiters) wake(deviceID string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.pending) >= maxPendingDevices {
		clear(w.pending)
	}
	w.pending[deviceID]++
	for ch := range w.waiters[deviceID] {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

// mark returns the device's pending count (0: not pending).
func (w *commandWaiters) mark(deviceID string) uint64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.pending[deviceID]
}

// settle forgets that the device is pending, unless it was woken since
// its count was gen.
func (w *commandWaiters) settle(deviceID string, gen uint64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.pending[deviceID] == gen {
		delete(w.pending, deviceID)
	}
}

func (w *commandWaiters) add(deviceID string) (chan struct{}, func()) {
	ch := make(chan struct{}, 1)
	w.mu.Lock()
	defer w.mu.Unlock()
	m := w.waiters[deviceID]
	if m == nil {
		m = map[chan struct{}]struct{}{}
		w.waiters[deviceID] = m
	}
	m[ch] = struct{}{}
	return ch, func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		delete(w.waiters[deviceID], ch)
		if len(w.waiters[deviceID]) == 0 {
			delete(w.waiters, deviceID)
		}
	}
}

// count is how many waiters there are.
func (w *commandWaiters) count() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := 0
	for _, m := range w.waiters {
		n += len(m)
	}
	return n
}

// WatchCommands registers a listener holding the connection of the device
// with the identifier: the channel receives a value whenever a command may
// be waiting for it (created on this service, or announced by another
// server through the store's CommandFeed while this service follows it),
// until stop is called. The listener then calls ClaimCommands. An
// identifier no device has is not_found.
func (e DeviceEdge) WatchCommands(ctx context.Context, identifier string) (wake <-chan struct{}, stop func(), err error) {
	r, err := e.s.route(ctx, identifier, false)
	if err != nil {
		return nil, nil, err
	}
	if !r.found {
		return nil, nil, Errorf(CodeNotFound, "No device with identifier %q is registered.", printable(identifier, 2*MaxIdentifier))
	}
	ch, stop := e.s.cmds.add(r.deviceID)
	return ch, stop, nil
}

// CommandsPending reports whether the device with the identifier may have
// commands queued, as far as this service knows (a command created here or
// announced by another server since its last claim, or one held), without
// reading the store: what OsmAnd's handler asks after each report.
func (e DeviceEdge) CommandsPending(ctx context.Context, identifier string) bool {
	r, err := e.s.route(ctx, identifier, false)
	return err == nil && r.found && e.s.cmds.mark(r.deviceID) != 0
}

// Claim is what ClaimCommands hands a listener: the commands to write now,
// in queue order, and whether others wait (an engine_stop held while the
// vehicle moves: claim again after the device's next report).
type Claim struct {
	Commands []ClaimedCommand
	Held     bool
}

// maxClaim bounds the commands one claim takes.
const maxClaim = 16

// ClaimCommands takes the queued commands of the device with the
// identifier that are to be written to it now, in queue order, moving each
// from queued to sent (command.sent) in one write transaction, for a
// listener that holds the device's connection and speaks protocol. On the
// way it expires those past their expires_at (command.expired), and holds an
// engine_stop while the device's latest report shows EngineStopMaxSpeed or
// more (unless forced), recording why in its error. Two servers claiming
// at once take each command once. An identifier no device has claims
// nothing; a device with nothing queued costs a read, no write.
func (e DeviceEdge) ClaimCommands(ctx context.Context, identifier string) (Claim, error) {
	s := e.s
	r, err := s.route(ctx, identifier, false)
	if err != nil || !r.found {
		return Claim{}, err
	}
	gen := s.cmds.mark(r.deviceID)
	now := s.Now()
	// Most claims (a login, a wake for another's command) find nothing:
	// a read, not a write, tells.
	var first []Command
	err = s.view(ctx, func(tx Tx) (err error) {
		first, err = tx.DeviceCommands(r.as.Account.ID, r.deviceID, CommandQueued, 1)
		return err
	})
	if err != nil {
		return Claim{}, err
	}
	if len(first) == 0 {
		s.cmds.settle(r.deviceID, gen)
		return Claim{}, nil
	}
	var cl Claim
	err = s.update(ctx, func(tx Tx) error {
		cl = Claim{}
		queued, err := tx.DeviceCommands(r.as.Account.ID, r.deviceID, CommandQueued, maxClaim)
		if err != nil || len(queued) == 0 {
			return err
		}
		d, err := tx.Device(r.as.Account.ID, r.deviceID)
		if err != nil {
			return err
		}
		for i := range queued {
			c := &queued[i]
			if !now.Before(c.ExpiresAt) {
				if err := s.moveCommand(tx, c, CommandExpired, expiredReason(c), now); err != nil {
					return err
				}
				continue
			}
			if v, held := c.holds(d.LastReport); held {
				cl.Held = true
				if reason := heldReason(v); c.Error != reason {
					c.Error = reason
					if err := tx.UpdateCommand(*c); err != nil {
						return err
					}
				}
				continue
			}
			c.Error = ""
			if err := s.moveCommand(tx, c, CommandSent, "", now); err != nil {
				return err
			}
			cl.Commands = append(cl.Commands, c.claimed())
		}
		if len(queued) == maxClaim {
			cl.Held = true // more wait: claim again
		}
		return nil
	})
	if err != nil {
		return Claim{}, err
	}
	if !cl.Held {
		s.cmds.settle(r.deviceID, gen)
	}
	return cl, nil
}

// expiredReason is the error of a command that expired.
func expiredReason(c *Command) string {
	if c.Error != "" {
		return "Expired while held. " + c.Error
	}
	return "Expired: the device did not connect before expires_at."
}

// errCommandGone: the command a listener reports on is not its device's,
// or not in a status the report concerns.
var errCommandGone = errors.New("fleet: no such command of the device")

// settleCommand moves the device's command id (the oldest sent one when id
// is "") from one of from to to.
func (e DeviceEdge) settleCommand(ctx context.Context, identifier, id string, from []CommandStatus, to CommandStatus, reason, result string) (Command, error) {
	s := e.s
	r, err := s.route(ctx, identifier, false)
	if err != nil {
		return Command{}, err
	}
	if !r.found {
		return Command{}, errCommandGone
	}
	now := s.Now()
	var c Command
	err = s.update(ctx, func(tx Tx) (err error) {
		if id == "" {
			sent, err := tx.DeviceCommands(r.as.Account.ID, r.deviceID, CommandSent, 1)
			if err != nil {
				return err
			}
			if len(sent) == 0 {
				return errCommandGone
			}
			c = sent[0]
		} else {
			c, err = tx.Command(r.as.Account.ID, id)
			if ErrorCode(err) == CodeNotFound || err == nil && c.DeviceID != r.deviceID {
				return errCommandGone
			}
			if err != nil {
				return err
			}
		}
		ok := false
		for _, f := range from {
			ok = ok || c.Status == f
		}
		if !ok {
			return errCommandGone
		}
		if result != "" {
			c.Result = clip(printableText(result), MaxCommandResult)
		}
		return s.moveCommand(tx, &c, to, reason, now)
	})
	if to == CommandQueued && err == nil {
		s.cmds.wake(r.deviceID)
	}
	return c, err
}

// printableText is s with control bytes other than CR, LF and TAB, and
// invalid UTF-8, replaced: a device's answer, safe to store and show.
func printableText(s string) string {
	b := []byte(s)
	for i, c := range b {
		if (c < 0x20 && c != '\r' && c != '\n' && c != '\t') || c == 0x7f {
			b[i] = '?'
		}
	}
	return string([]rune(string(b)))
}

// CommandAnswered records the device's answer to command id (the oldest
// sent one when id is ""): delivered, with result the answer's text
// (command.delivered). A command not sent to this device is not_found
// (an answer nobody waits for: the listener ignores it).
func (e DeviceEdge) CommandAnswered(ctx context.Context, identifier, id, result string) (Command, error) {
	c, err := e.settleCommand(ctx, identifier, id, []CommandStatus{CommandSent}, CommandDelivered, "", result)
	if errors.Is(err, errCommandGone) {
		return Command{}, Errorf(CodeNotFound, "No command is waiting for the device's answer.")
	}
	return c, err
}

// CommandFailed records that command id (queued or sent) failed, for
// reason: its protocol could not carry it, or the device answered with
// garbage (command.failed).
func (e DeviceEdge) CommandFailed(ctx context.Context, identifier, id, reason string) (Command, error) {
	c, err := e.settleCommand(ctx, identifier, id, []CommandStatus{CommandQueued, CommandSent}, CommandFailed, reason, "")
	if errors.Is(err, errCommandGone) {
		return Command{}, Errorf(CodeNotFound, "No such command of the device.")
	}
	return c, err
}

// CommandUnsent queues command id again: it was claimed for a connection
// that closed before it was written. It goes at the device's next
// connection, on whichever server.
func (e DeviceEdge) CommandUnsent(ctx context.Context, identifier, id string) (Command, error) {
	c, err := e.settleCommand(ctx, identifier, id, []CommandStatus{CommandSent}, CommandQueued,
		"Not written: the device's connection closed first; it is sent at the next connection.", "")
	if errors.Is(err, errCommandGone) {
		return Command{}, Errorf(CodeNotFound, "No such command of the device.")
	}
	return c, err
}

// maxExpireBatch bounds the commands one ExpireCommands reads at once.
const maxExpireBatch = 500

// ExpireCommands moves the queued commands past their expires_at to expired
// (command.expired), and returns how many. Run calls it with each sweep.
func (j Jobs) ExpireCommands(ctx context.Context) (int, error) {
	s := j.s
	now := s.Now()
	n := 0
	for {
		cs, err := s.store.ExpiringCommands(ctx, now, maxExpireBatch)
		if err != nil || len(cs) == 0 {
			return n, err
		}
		for _, old := range cs {
			err := s.update(ctx, func(tx Tx) error {
				c, err := tx.Command(old.AccountID, old.ID)
				if ErrorCode(err) == CodeNotFound {
					return nil
				}
				if err != nil || c.Status != CommandQueued || now.Before(c.ExpiresAt) {
					return err
				}
				n++
				return s.moveCommand(tx, &c, CommandExpired, expiredReason(&c), now)
			})
			if err != nil {
				return n, err
			}
		}
		if len(cs) < maxExpireBatch {
			return n, nil
		}
	}
}

// FollowCommands wakes this service's listeners with the commands every
// server announces through the store's CommandFeed (sqlstore on PostgreSQL),
// until ctx ends, following again a second after the feed fails: each
// time it starts following, every listener claims, for what may have been
// announced meanwhile. Run calls it; it returns at once when the store is
// no CommandFeed. FollowingCommands is closed once it first follows.
func (j Jobs) FollowCommands(ctx context.Context) {
	s := j.s
	feed, ok := s.store.(CommandFeed)
	if !ok {
		return
	}
	s.followFeed(ctx, "follow the shared command feed", func() error {
		return feed.FollowCommands(ctx, func(ids []string) {
			if len(ids) == 0 {
				// Following (again): what was announced before may
				// have been missed, so every waiter claims.
				s.cmds.wakeAll()
				return
			}
			for _, id := range ids {
				s.cmds.wake(id)
			}
		})
	}, nil)
}

// FollowingCommands returns a channel closed once FollowCommands first
// follows the store's announcements.
func (j Jobs) FollowingCommands() <-chan struct{} { return j.s.cmds.following }

// CommandWatchers is how many device connections wait for commands on this
// service.
func (j Jobs) CommandWatchers() int { return j.s.cmds.count() }

// OperatorKeyID is the created_by of the commands the operator sends
// (Operator.SendCommand).
const OperatorKeyID = "operator"

// operatorDevice returns the device with the identifier and a principal
// acting for its account, with every permission, as the operator.
func (o Operator) operatorDevice(ctx context.Context, identifier string) (Device, Principal, error) {
	s := o.s
	var d Device
	var a Account
	err := s.view(ctx, func(tx Tx) (err error) {
		d, err = tx.DeviceByIdentifier(identifier)
		if ErrorCode(err) == CodeNotFound {
			return Errorf(CodeNotFound, "No device with identifier %q is registered.", printable(identifier, 2*MaxIdentifier))
		}
		if err != nil {
			return err
		}
		a, err = tx.Account(d.AccountID)
		return err
	})
	if err != nil {
		return Device{}, Principal{}, err
	}
	p := SystemPrincipal(a)
	p.Key.ID = OperatorKeyID
	return d, p, nil
}

// SendCommand queues a command to the device with the identifier, of
// whichever account, as CreateCommand does (the same rules), recorded as
// the operator's (created_by "operator").
func (o Operator) SendCommand(ctx context.Context, identifier string, in CommandInput) (Command, error) {
	d, p, err := o.operatorDevice(ctx, identifier)
	if err != nil {
		return Command{}, err
	}
	return o.s.CreateCommand(ctx, p, d.ID, in)
}

// DeviceCommands lists the commands of the device with the identifier,
// newest first, as ListCommands does.
func (o Operator) DeviceCommands(ctx context.Context, identifier string, f CommandFilter, q ListQuery) (List[Command], error) {
	d, p, err := o.operatorDevice(ctx, identifier)
	if err != nil {
		return List[Command]{}, err
	}
	return o.s.ListCommands(ctx, p, d.ID, f, q)
}

// CancelCommand cancels a queued command of the device with the
// identifier, as CancelCommand does.
func (o Operator) CancelCommand(ctx context.Context, identifier, id string) (Command, error) {
	d, p, err := o.operatorDevice(ctx, identifier)
	if err != nil {
		return Command{}, err
	}
	if c, err := o.s.Command(ctx, p, id); err != nil || c.DeviceID != d.ID {
		return Command{}, notFoundCommand(id)
	}
	return o.s.CancelCommand(ctx, p, id)
}

// CommandProtocols returns what each device protocol can carry, as the
// service was told (Options.Protocols), for a client that offers only
// those types.
func (s *Service) CommandProtocols() map[string]ProtocolCommands { return s.opts.Protocols }
