package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/jackc/pgx/v5"
)

// The commands area (table commands, migration 0019).

const commandColumns = `id, account_id, device_id, type, seconds, idx, output_on, body_text, body_hex, forced, status, result, error,
	created_by, created_at, expires_at, sent_at, delivered_at, finished_at`

func nullInt(p *int) any {
	if p == nil {
		return nil
	}
	return int64(*p)
}

func fromNullInt(v sql.NullInt64) *int {
	if !v.Valid {
		return nil
	}
	n := int(v.Int64)
	return &n
}

func boolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

func scanCommand(s scanner) (fleet.Command, error) {
	var c fleet.Command
	var seconds, idx, on, sent, delivered, finished sql.NullInt64
	var force, created, expires int64
	var status string
	if err := s.Scan(&c.ID, &c.AccountID, &c.DeviceID, &c.Type, &seconds, &idx, &on, &c.Text, &c.Hex, &force, &status,
		&c.Result, &c.Error, &c.CreatedBy, &created, &expires, &sent, &delivered, &finished); err != nil {
		return fleet.Command{}, err
	}
	c.Seconds, c.Index = fromNullInt(seconds), fromNullInt(idx)
	if on.Valid {
		b := on.Int64 != 0
		c.On = &b
	}
	c.Force, c.Status = force != 0, fleet.CommandStatus(status)
	c.CreatedAt, c.ExpiresAt = fromDB(created), fromDB(expires)
	c.SentAt, c.DeliveredAt, c.FinishedAt = fromNullDB(sent), fromNullDB(delivered), fromNullDB(finished)
	return c, nil
}

// commandChannel is the channel on which PostgreSQL announces the devices
// of new commands to every server (fleet.CommandFeed).
const commandChannel = "fleet_commands"

// CreateCommand implements fleet.Tx. On PostgreSQL it announces the
// command's device on commandChannel, which PostgreSQL delivers when the
// transaction commits (and never if it rolls back).
func (t *tx) CreateCommand(c fleet.Command) error {
	var on any
	if c.On != nil {
		on = boolInt(*c.On)
	}
	err := t.insert(`INSERT INTO commands (`+commandColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		c.ID, c.AccountID, c.DeviceID, c.Type, nullInt(c.Seconds), nullInt(c.Index), on, c.Text, c.Hex, boolInt(c.Force),
		string(c.Status), c.Result, c.Error, c.CreatedBy, toDB(c.CreatedAt), toDB(c.ExpiresAt),
		toNullDB(c.SentAt), toNullDB(c.DeliveredAt), toNullDB(c.FinishedAt))
	switch classify(err) {
	case errUnique:
		return conflict(err, "A command with id %q exists.", c.ID)
	case errForeignKey:
		return notFound(err, "account", c.AccountID)
	}
	if err != nil {
		return wrap(err, "create command")
	}
	if t.d.name == Postgres {
		var s string
		err := t.queryRow(`SELECT CAST(pg_notify('`+commandChannel+`', ?) AS TEXT)`, c.DeviceID).Scan(&s)
		return wrap(t.failed(err), "announce command")
	}
	return nil
}

// Command implements fleet.Tx.
func (t *tx) Command(accountID, id string) (fleet.Command, error) {
	c, err := scanCommand(t.queryRow(`SELECT `+commandColumns+` FROM commands WHERE id = ? AND account_id = ?`, id, accountID))
	if errors.Is(err, sql.ErrNoRows) {
		return fleet.Command{}, fleet.NotFound("command", id)
	}
	return c, wrap(t.failed(err), "read command")
}

// Commands implements fleet.Tx: newest first down commands_device_list.
func (t *tx) Commands(accountID, deviceID string, f fleet.CommandFilter, p fleet.Page) ([]fleet.Command, error) {
	out := []fleet.Command{}
	if p.Limit <= 0 {
		return out, nil
	}
	where := []string{"device_id = ?", "account_id = ?"}
	args := []any{deviceID, accountID}
	if p.After != "" {
		where, args = append(where, "id < ?"), append(args, p.After)
	}
	if f.Status != "" {
		where, args = append(where, "status = ?"), append(args, string(f.Status))
	}
	return t.commands(out, "list commands", `SELECT `+commandColumns+` FROM commands WHERE `+strings.Join(where, " AND ")+
		` ORDER BY id DESC LIMIT ?`, append(args, int64(p.Limit))...)
}

// DeviceCommands implements fleet.Tx: one range of commands_device.
func (t *tx) DeviceCommands(accountID, deviceID string, st fleet.CommandStatus, limit int) ([]fleet.Command, error) {
	out := []fleet.Command{}
	if limit <= 0 {
		return out, nil
	}
	return t.commands(out, "read a device's commands", `SELECT `+commandColumns+` FROM commands
		WHERE device_id = ? AND status = ? AND account_id = ? ORDER BY id LIMIT ?`, deviceID, string(st), accountID, int64(limit))
}

// commands appends the commands a query (written with ? placeholders)
// returns to out.
func (t *tx) commands(out []fleet.Command, doing, query string, args ...any) ([]fleet.Command, error) {
	rows, err := t.query(t.d.q(query), args...)
	if err != nil {
		return nil, wrap(t.failed(err), doing)
	}
	defer rows.Close()
	for rows.Next() {
		c, err := scanCommand(rows)
		if err != nil {
			return nil, wrap(err, doing)
		}
		out = append(out, c)
	}
	return out, wrap(t.failed(rows.Err()), doing)
}

// UpdateCommand implements fleet.Tx.
func (t *tx) UpdateCommand(c fleet.Command) error {
	n, err := t.update(`UPDATE commands SET status = ?, result = ?, error = ?, sent_at = ?, delivered_at = ?, finished_at = ?
		WHERE id = ? AND account_id = ?`, string(c.Status), c.Result, c.Error, toNullDB(c.SentAt), toNullDB(c.DeliveredAt),
		toNullDB(c.FinishedAt), c.ID, c.AccountID)
	if err != nil {
		return wrap(err, "update command")
	}
	if n == 0 {
		return fleet.NotFound("command", c.ID)
	}
	return nil
}

// DeleteCommands implements fleet.Tx.
func (t *tx) DeleteCommands(accountID, deviceID string) (int, error) {
	n, err := t.update(`DELETE FROM commands WHERE device_id = ? AND account_id = ?`, deviceID, accountID)
	return int(n), wrap(err, "delete commands")
}

// ExpiringCommands implements fleet.Store: one range of commands_expiring.
func (s *Store) ExpiringCommands(ctx context.Context, at time.Time, limit int) ([]fleet.Command, error) {
	out := []fleet.Command{}
	if limit <= 0 {
		return out, nil
	}
	ctx, cancel := s.bound(ctx)
	defer cancel()
	rows, err := s.rdb.QueryContext(ctx, s.d.q(`SELECT `+commandColumns+` FROM commands
		WHERE status = ? AND expires_at <= ? ORDER BY expires_at, id LIMIT ?`), string(fleet.CommandQueued), toDB(at), int64(limit))
	if err != nil {
		return nil, wrap(faultIn(ctx, err), "read expiring commands")
	}
	defer rows.Close()
	for rows.Next() {
		c, err := scanCommand(rows)
		if err != nil {
			return nil, wrap(err, "read expiring commands")
		}
		out = append(out, c)
	}
	return out, wrap(faultIn(ctx, rows.Err()), "read expiring commands")
}

// PurgeCommands implements fleet.Store.
func (s *Store) PurgeCommands(ctx context.Context, before time.Time) (int, error) {
	return s.purge(ctx, `DELETE FROM commands WHERE created_at < ?`, before, "purge commands")
}

// FollowCommands implements fleet.CommandFeed on PostgreSQL, on a
// connection of its own that listens on commandChannel; on SQLite, whose
// file one process serves, it returns fleet.ErrNoLiveFeed.
func (s *Store) FollowCommands(ctx context.Context, wake func(deviceIDs []string)) error {
	e, ok := s.eng.(*pgEngine)
	if !ok {
		return fleet.ErrNoLiveFeed
	}
	conn, err := pgx.Connect(ctx, e.dsn)
	if err != nil {
		return fmt.Errorf("sqlstore: command feed: connect: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if _, err := conn.Exec(ctx, "LISTEN "+commandChannel); err != nil {
		return fmt.Errorf("sqlstore: command feed: %w", err)
	}
	wake(nil) // following from now on
	for {
		n, err := conn.WaitForNotification(ctx)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err != nil {
			return fmt.Errorf("sqlstore: command feed: %w", err)
		}
		wake([]string{n.Payload})
	}
}
