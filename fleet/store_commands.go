package fleet

import (
	"context"
	"time"
)

// CommandTx is the commands area's part of a Tx: commands to devices, kept
// with their device. Reads scoped by account return not_found for another
// account's command, as the rest of Tx does.
type CommandTx interface {
	// CreateCommand stores a new command. Returns conflict if the id is
	// stored already, not_found if the account does not exist.
	CreateCommand(c Command) error
	// Command returns not_found if the account has no such command.
	Command(accountID, id string) (Command, error)
	// Commands returns the commands of the account's device deviceID that
	// f.Match, newest first (descending id order), before p.After (every
	// one when it is ""), at most p.Limit of them. Page.Newest is
	// ignored: this list is always newest first.
	Commands(accountID, deviceID string, f CommandFilter, p Page) ([]Command, error)
	// DeviceCommands returns the device's commands with status st, in
	// queue order (ascending id), at most limit of them: what a delivery
	// claims, an answer settles and a new engine command replaces.
	DeviceCommands(accountID, deviceID string, st CommandStatus, limit int) ([]Command, error)
	// UpdateCommand stores a command's Status, Result, Error, SentAt,
	// DeliveredAt and FinishedAt (the other fields stay). Returns
	// not_found if the account has no such command.
	UpdateCommand(c Command) error
	// DeleteCommands deletes the commands of the account's device and
	// returns how many there were.
	DeleteCommands(accountID, deviceID string) (int, error)
}

// CommandStore is the commands area's part of a Store: what the clock
// finishes and the purge. It runs outside transactions.
type CommandStore interface {
	// ExpiringCommands returns queued commands, of every account, whose
	// ExpiresAt is at or before at, in id order, at most limit of them.
	ExpiringCommands(ctx context.Context, at time.Time, limit int) ([]Command, error)
	// PurgeCommands deletes the commands created before before, whatever
	// their status, and returns how many it deleted.
	PurgeCommands(ctx context.Context, before time.Time) (int, error)
}

// CommandFeed is implemented by a store that several servers share (sqlstore
// on PostgreSQL): a command created by any server wakes the server that
// holds its device's connection. The store announces the device of each
// command CreateCommand stores once its transaction commits, and
// FollowCommands calls wake, from one goroutine, with the device ids every
// server announces, until ctx ends (it returns ctx's error, or why it could
// not go on): first once with none, as soon as it follows the
// announcements (what was announced before may have been missed). An
// announcement lost while no server followed delays a command until its
// device's next login (see Jobs.FollowCommands).
type CommandFeed interface {
	FollowCommands(ctx context.Context, wake func(deviceIDs []string)) error
}
