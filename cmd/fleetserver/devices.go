package main

import (
	"context"
	"flag"
	"fmt"
	"strings"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
)

// The operator's view of the device edge: identifiers that tried to log in
// or report without being registered.

func devicesUnknownCommand() command {
	return command{
		name:    "devices unknown",
		summary: "list identifiers that tried to report unregistered",
		about: "Lists the identifiers that tried to log in or report to the device listeners without a device\n" +
			"registered with them (POST /v1/devices registers one): identifier, protocol, the address it\n" +
			"came from, when first and last seen, and how many attempts, the last seen first. A tracker\n" +
			"that sends an IMEI nobody registered shows up here. An address's attempts past " + fmt.Sprint(fleet.UnknownRecordsPerMinute) + " a minute,\n" +
			"and a server's past " + fmt.Sprint(fleet.UnknownRecordsPerSecond) + " a second, are counted in the metrics only; at most " + fmt.Sprint(fleet.UnknownRecordsKept) + "\n" +
			"records are kept, the least recently seen forgotten first, and records unseen for " + fmt.Sprint(int(fleet.UnknownDeviceRetention/(24*time.Hour))) + " days\n" +
			"are purged.",
		example: "fleetserver devices unknown --db sqlite:/var/lib/fleet/fleet.db --limit 20",
		define: func(c *cli, f *flags) func(context.Context, []string) error {
			dsn := f.db()
			asJSON := f.fs.Bool("json", false, "print a JSON array of records")
			limit := f.fs.Int("limit", fleet.DefaultUnknownDevices, fmt.Sprintf("list at most `N` records (1 to %d)", fleet.MaxUnknownDevices))
			return func(ctx context.Context, args []string) error {
				if err := noArgs("devices unknown", args); err != nil {
					return err
				}
				if *limit < 1 || *limit > fleet.MaxUnknownDevices {
					return usagef("devices unknown", "--limit must be between 1 and %d, not %d", fleet.MaxUnknownDevices, *limit)
				}
				var all []fleet.UnknownDevice
				err := withOperator(ctx, *dsn, false, func(op fleet.Operator) (err error) {
					all, err = op.UnknownDevices(ctx, *limit)
					return describe(err, nil)
				})
				if err != nil {
					return err
				}
				if *asJSON {
					if all == nil {
						all = []fleet.UnknownDevice{}
					}
					return writeJSON(c.stdout, all)
				}
				tw := table(c.stdout, "IDENTIFIER", "PROTOCOL", "ADDRESS", "FIRST SEEN", "LAST SEEN", "COUNT")
				for _, u := range all {
					ident := u.Identifier
					if ident == "" {
						ident = "-"
					}
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\n", ident, u.Protocol, u.Address,
						u.FirstSeen.Format(time.RFC3339), u.LastSeen.Format(time.RFC3339), u.Count)
				}
				return tw.Flush()
			}
		},
	}
}

// devicesCommandCommand sends, lists and cancels the commands of a device
// by its identifier, as the operator.
func devicesCommandCommand() command {
	return command{
		name:    "devices command",
		args:    "IDENTIFIER [TYPE]",
		summary: "send a command to a device, or list or cancel its commands",
		about: "Queues a command to the device registered with IDENTIFIER (of whichever account), by the\n" +
			"rules of POST /v1/devices/{device_id}/commands, recorded as the operator's (created_by\n" +
			"\"operator\"). TYPE is one of " + strings.Join(fleet.CommandTypes(), ", ") + ".\n" +
			"The server holding the device's connection writes it at once (on PostgreSQL, whichever\n" +
			"server that is; on SQLite the server picks it up at the device's next login), else at the\n" +
			"device's next connection. An engine_stop waits while the device's latest report shows\n" +
			fmt.Sprintf("%.0f km/h or more, unless --force. ", fleet.EngineStopMaxSpeed) +
			"Without TYPE, --list prints the device's latest commands (newest\n" +
			"first) and --cancel ID cancels a queued one.",
		example: "fleetserver devices command --db postgres://fleet@db/fleet 356307042441013 engine_stop\n" +
			"  fleetserver devices command 356307042441013 set_interval --seconds 30\n" +
			"  fleetserver devices command 356307042441013 output --index 1 --state on\n" +
			"  fleetserver devices command 356307042441013 custom --text getver\n" +
			"  fleetserver devices command --list 356307042441013",
		define: func(c *cli, f *flags) func(context.Context, []string) error {
			dsn := f.db()
			asJSON := f.fs.Bool("json", false, "print JSON")
			list := f.fs.Bool("list", false, "list the device's latest commands")
			cancel := f.fs.String("cancel", "", "cancel the queued command `ID`")
			seconds := f.fs.Int("seconds", 0, "set_interval: the reporting interval in `SECONDS`")
			index := f.fs.Int("index", 0, "output: the output's `NUMBER`, from 1")
			state := f.fs.String("state", "", "output: `on` or off")
			text := f.fs.String("text", "", "custom: the protocol's own `TEXT`")
			hexBytes := f.fs.String("hex", "", "custom: the protocol's own bytes, as `HEX` digits")
			force := f.fs.Bool("force", false, "engine_stop: send it whatever the vehicle's speed")
			expiresIn := f.fs.Duration("expires-in", fleet.DefaultCommandTTL, "how long it waits for the device (`DURATION`)")
			return func(ctx context.Context, args []string) error {
				const name = "devices command"
				if len(args) < 1 || len(args) > 2 {
					return usagef(name, "give the device's IDENTIFIER, and a command TYPE to send one")
				}
				identifier := args[0]
				if len(args) == 1 {
					switch {
					case *list && *cancel == "":
						return devicesCommandList(ctx, c, *dsn, identifier, *asJSON)
					case *cancel != "" && !*list:
						return devicesCommandCancel(ctx, c, *dsn, identifier, *cancel, *asJSON)
					}
					return usagef(name, "give a command TYPE to send, or --list, or --cancel ID")
				}
				if *list || *cancel != "" {
					return usagef(name, "--list and --cancel take no TYPE")
				}
				in := fleet.CommandInput{Type: args[1], Force: *force}
				seen := map[string]bool{}
				f.fs.Visit(func(fl *flag.Flag) { seen[fl.Name] = true })
				if seen["seconds"] {
					in.Seconds = seconds
				}
				if seen["index"] {
					in.Index = index
				}
				if seen["state"] {
					on := *state == "on"
					if !on && *state != "off" {
						return usagef(name, "--state must be on or off, not %q", *state)
					}
					in.On = &on
				}
				if seen["text"] {
					in.Text = text
				}
				if seen["hex"] {
					in.Hex = hexBytes
				}
				var cmd fleet.Command
				err := withOperator(ctx, *dsn, false, func(op fleet.Operator) (err error) {
					if seen["expires-in"] {
						at := time.Now().Add(*expiresIn)
						in.ExpiresAt = &at
					}
					cmd, err = op.SendCommand(ctx, identifier, in)
					return describe(err, map[string]string{"seconds": "seconds", "index": "index", "on": "state", "text": "text",
						"hex": "hex", "force": "force", "expires_at": "expires-in"})
				})
				if err != nil {
					return err
				}
				return printCommands(c, []fleet.Command{cmd}, *asJSON, true)
			}
		},
	}
}

func devicesCommandList(ctx context.Context, c *cli, dsn, identifier string, asJSON bool) error {
	var l fleet.List[fleet.Command]
	err := withOperator(ctx, dsn, false, func(op fleet.Operator) (err error) {
		l, err = op.DeviceCommands(ctx, identifier, fleet.CommandFilter{}, fleet.ListQuery{})
		return describe(err, nil)
	})
	if err != nil {
		return err
	}
	return printCommands(c, l.Items, asJSON, false)
}

func devicesCommandCancel(ctx context.Context, c *cli, dsn, identifier, id string, asJSON bool) error {
	var cmd fleet.Command
	err := withOperator(ctx, dsn, false, func(op fleet.Operator) (err error) {
		cmd, err = op.CancelCommand(ctx, identifier, id)
		return describe(err, nil)
	})
	if err != nil {
		return err
	}
	return printCommands(c, []fleet.Command{cmd}, asJSON, true)
}

// printCommands prints commands as a table (or JSON: one object when one
// is true, else an array).
func printCommands(c *cli, cmds []fleet.Command, asJSON, one bool) error {
	if asJSON {
		if one {
			return writeJSON(c.stdout, cmds[0])
		}
		return writeJSON(c.stdout, cmds)
	}
	tw := table(c.stdout, "COMMAND", "TYPE", "STATUS", "CREATED", "BY", "RESULT OR ERROR")
	for _, cmd := range cmds {
		note := cmd.Result
		if note == "" {
			note = cmd.Error
		}
		if note == "" {
			note = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", cmd.ID, cmd.Type, cmd.Status, cmd.CreatedAt.Format(time.RFC3339), cmd.CreatedBy, note)
	}
	return tw.Flush()
}
