package fleetdevice

import (
	"context"
	"errors"
	"sync"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/fleetdevice/devproto"
)

// Commander is what an Ingest may also have (fleet's device edge has it):
// the queue of commands to devices (API.md §16). A Server whose Ingest is
// a Commander writes each device's commands to the connection it holds:
// once the device has logged in, whenever the Commander wakes it (a
// command posted to this server, or to another sharing the store), and
// after each report while the device may have commands waiting (an engine
// stop held until the vehicle slows down). OsmAnd devices, which hold no
// connection, get a command in the answer to a report. The device's
// answers (Message.HasResult) settle them; garbage after a command fails
// it. Without a Commander, no command is written.
type Commander interface {
	WatchCommands(ctx context.Context, identifier string) (<-chan struct{}, func(), error)
	ClaimCommands(ctx context.Context, identifier string) (fleet.Claim, error)
	CommandsPending(ctx context.Context, identifier string) bool
	CommandAnswered(ctx context.Context, identifier, id, result string) (fleet.Command, error)
	CommandFailed(ctx context.Context, identifier, id, reason string) (fleet.Command, error)
	CommandUnsent(ctx context.Context, identifier, id string) (fleet.Command, error)
}

// Reasons a command failed, as its error says.
const (
	reasonGarbage  = "The device answered with bytes its protocol cannot carry; its connection was closed."
	reasonEncoding = "The device's protocol cannot carry this command: "
)

// protoCommand is the command an encoder takes.
func protoCommand(c fleet.ClaimedCommand, seq uint32) devproto.Command {
	return devproto.Command{Type: c.Type, Seconds: c.Seconds, Index: c.Index, On: c.On, Text: c.Text, Hex: c.Hex, Seq: seq}
}

// CommandCheck judges a command for the protocol called name as its
// encoder would (CheckCommand), in the form of fleet.Options.CheckCommand:
// the member at fault and why, or "", "" when the protocol carries it as
// given (or has no encoder: fleet refuses its types itself).
func CommandCheck(name string, c fleet.ClaimedCommand) (field, problem string) {
	var ce *devproto.CommandError
	if err := CheckCommand(name, protoCommand(c, 1)); errors.As(err, &ce) {
		return ce.Field, ce.Message
	}
	return "", ""
}

// encodeReason is the error of a command its encoder refused.
func encodeReason(err error) string {
	var ce *devproto.CommandError
	switch {
	case errors.As(err, &ce):
		return reasonEncoding + ce.Error() + "."
	case errors.Is(err, devproto.ErrCommandUnsupported):
		return reasonEncoding + "not a type it carries."
	}
	return reasonEncoding + err.Error() + "."
}

// written is a command written to a connection and not answered yet.
type written struct {
	seq uint32
	id  string
}

// connCommands is the delivery of one connection's commands: a goroutine
// that claims and writes them (run), and what the reading goroutine tells
// it (the answers, a report that may let a held command go).
type connCommands struct {
	c     *tcpConn
	cm    Commander
	enc   devproto.Encoder
	id    string // the device's identifier
	kick  chan struct{}
	done  chan struct{}
	ended chan struct{}

	mu      sync.Mutex
	seq     uint32
	pending []written // written, oldest first
}

// startCommands starts the delivery of the device id's commands on c,
// once c has logged in, when the Server has a Commander and c's protocol
// an encoder.
func (c *tcpConn) startCommands(id string) {
	s := c.s
	cm, ok := s.ing.(Commander)
	if !ok || c.cmds != nil {
		return
	}
	enc, ok := EncoderNamed(c.p.Name())
	if !ok {
		return
	}
	ctx, cancel := context.WithTimeout(s.base, s.opts.ReportTimeout)
	wake, stop, err := cm.WatchCommands(ctx, id)
	cancel()
	if err != nil {
		s.log.Warn("device commands not watched", "protocol", c.pr.proto, "identifier", id, "error", err)
		return
	}
	cc := &connCommands{c: c, cm: cm, enc: enc, id: id, kick: make(chan struct{}, 1), done: make(chan struct{}), ended: make(chan struct{})}
	c.cmds = cc
	go cc.run(wake, stop)
}

// run claims and writes the device's commands: at once (the device has
// just logged in), then whenever woken, until the connection ends.
func (cc *connCommands) run(wake <-chan struct{}, stop func()) {
	defer close(cc.ended)
	defer stop()
	for {
		if !cc.deliver() {
			return
		}
		select {
		case <-wake:
		case <-cc.kick:
		case <-cc.done:
			return
		}
	}
}

// deliver claims the commands due and writes them in queue order, and
// reports false once the connection can take no more.
func (cc *connCommands) deliver() bool {
	s := cc.c.s
	ctx, cancel := context.WithTimeout(s.base, s.opts.ReportTimeout)
	defer cancel()
	cl, err := cc.cm.ClaimCommands(ctx, cc.id)
	if err != nil {
		s.log.Warn("device commands not claimed", "protocol", cc.c.pr.proto, "identifier", cc.id, "error", err)
		return true
	}
	for i, cmd := range cl.Commands {
		cc.mu.Lock()
		cc.seq++
		seq := cc.seq
		cc.mu.Unlock()
		sess := Session{Transport: TCP, Identifier: cc.id, Now: s.opts.Now()}
		b, err := cc.enc.Encode(nil, protoCommand(cmd, seq), &sess)
		if err != nil {
			s.stats.commandsFailed.Add(1)
			if _, ferr := cc.cm.CommandFailed(ctx, cc.id, cmd.ID, encodeReason(err)); ferr != nil {
				s.log.Warn("device command failure not recorded", "identifier", cc.id, "command_id", cmd.ID, "error", ferr)
			}
			continue
		}
		cc.mu.Lock()
		cc.pending = append(cc.pending, written{seq: seq, id: cmd.ID})
		cc.mu.Unlock()
		// Counted before the write: the device may read and answer it
		// before the write returns here, and what it answered was sent.
		s.stats.commandsSent.Add(1)
		cc.c.turn.Lock() // after the acknowledgement of a frame being handled
		ok := cc.c.write(b)
		cc.c.turn.Unlock()
		if !ok {
			s.stats.commandsSent.Add(-1)
			// The connection is gone: this command and those after it
			// go at the device's next connection.
			cc.forget(seq)
			for _, rest := range cl.Commands[i:] {
				if _, err := cc.cm.CommandUnsent(ctx, cc.id, rest.ID); err != nil {
					s.log.Warn("device command not queued again", "identifier", cc.id, "command_id", rest.ID, "error", err)
				}
			}
			return false
		}
	}
	return true
}

// forget drops the written command seq.
func (cc *connCommands) forget(seq uint32) {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	for i, w := range cc.pending {
		if w.seq == seq {
			cc.pending = append(cc.pending[:i], cc.pending[i+1:]...)
			return
		}
	}
}

// answered takes the written command an answer with seq settles (0: the
// oldest), "" when none waits.
func (cc *connCommands) answered(seq uint32) string {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	for i, w := range cc.pending {
		if seq == 0 || w.seq == seq {
			cc.pending = append(cc.pending[:i], cc.pending[i+1:]...)
			return w.id
		}
	}
	return ""
}

// answer records the device's answer m carries.
func (cc *connCommands) answer(m *Message) {
	s := cc.c.s
	id := cc.answered(m.ResultSeq)
	ctx, cancel := context.WithTimeout(s.base, s.opts.ReportTimeout)
	defer cancel()
	if _, err := cc.cm.CommandAnswered(ctx, cc.id, id, m.CommandResult); err != nil {
		if fleet.ErrorCode(err) != fleet.CodeNotFound {
			s.log.Warn("device command answer not recorded", "identifier", cc.id, "command_id", id, "error", err)
		}
		return
	}
	s.stats.commandsAnswered.Add(1)
}

// reported tells the delivery that the device reported: a held command
// may go now.
func (cc *connCommands) reported() {
	ctx, cancel := context.WithTimeout(cc.c.s.base, cc.c.s.opts.ReportTimeout)
	pending := cc.cm.CommandsPending(ctx, cc.id)
	cancel()
	if pending {
		select {
		case cc.kick <- struct{}{}:
		default:
		}
	}
}

// end stops the delivery as the connection closes; garbage fails the
// commands written and not answered (a device that cannot acknowledge
// leaves them sent otherwise).
func (cc *connCommands) end(garbage bool) {
	close(cc.done)
	<-cc.ended
	if !garbage {
		return
	}
	s := cc.c.s
	cc.mu.Lock()
	pending := cc.pending
	cc.pending = nil
	cc.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.WithoutCancel(s.base), s.opts.ReportTimeout)
	defer cancel()
	for _, w := range pending {
		s.stats.commandsFailed.Add(1)
		if _, err := cc.cm.CommandFailed(ctx, cc.id, w.id, reasonGarbage); err != nil && fleet.ErrorCode(err) != fleet.CodeNotFound {
			s.log.Warn("device command failure not recorded", "identifier", cc.id, "command_id", w.id, "error", err)
		}
	}
}

// osmandCommand returns the body of the answer to an OsmAnd report of the
// device id: the text of its first command due, when it may have one (the
// others are queued again, for the next reports), nil otherwise. The
// protocol has no acknowledgement: the command stays sent.
func (s *Server) osmandCommand(id string) []byte {
	cm, ok := s.ing.(Commander)
	if !ok {
		return nil
	}
	enc, ok := EncoderNamed(OsmAndName)
	if !ok {
		return nil
	}
	ctx, cancel := context.WithTimeout(s.base, s.opts.ReportTimeout)
	defer cancel()
	if !cm.CommandsPending(ctx, id) {
		return nil
	}
	cl, err := cm.ClaimCommands(ctx, id)
	if err != nil {
		s.log.Warn("device commands not claimed", "protocol", OsmAndName, "identifier", id, "error", err)
		return nil
	}
	var body []byte
	for _, cmd := range cl.Commands {
		if body != nil {
			if _, err := cm.CommandUnsent(ctx, id, cmd.ID); err != nil {
				s.log.Warn("device command not queued again", "identifier", id, "command_id", cmd.ID, "error", err)
			}
			continue
		}
		sess := Session{Transport: HTTP, Identifier: id, Now: s.opts.Now()}
		b, err := enc.Encode(nil, protoCommand(cmd, 0), &sess)
		if err != nil {
			s.stats.commandsFailed.Add(1)
			if _, ferr := cm.CommandFailed(ctx, id, cmd.ID, encodeReason(err)); ferr != nil {
				s.log.Warn("device command failure not recorded", "identifier", id, "command_id", cmd.ID, "error", ferr)
			}
			continue
		}
		body = b
		s.stats.commandsSent.Add(1)
	}
	return body
}
