package main

import (
	"context"
	"fmt"
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
