package fleethttp

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/fleetwire"
)

// Commands go out as fleet.Command, whose JSON is the API's.

func (h *Handler) createCommand(c *call) error {
	req, err := decode[fleetwire.CommandInput](c.body, false)
	if err != nil {
		return err
	}
	cmd, err := h.svc.CreateCommand(c.r.Context(), c.p, c.r.PathValue("device_id"), fleet.CommandInput{Type: req.Type,
		Seconds: req.Seconds, Index: req.Index, On: req.On, Text: req.Text, Hex: req.Hex, Force: req.Force, ExpiresAt: req.ExpiresAt})
	if err != nil {
		return err
	}
	return c.ok(http.StatusAccepted, cmd)
}

func (h *Handler) listCommands(c *call) error {
	q, lq, err := c.listQuery()
	if err != nil {
		return err
	}
	l, err := h.svc.ListCommands(c.r.Context(), c.p, c.r.PathValue("device_id"), fleet.CommandFilter{Status: fleet.CommandStatus(q.Get("status"))}, lq)
	if err != nil {
		return err
	}
	return c.list(l.Items, l.NextCursor, l.HasMore)
}

func (h *Handler) getCommand(c *call) error {
	cmd, err := h.svc.Command(c.r.Context(), c.p, c.r.PathValue("command_id"))
	if err != nil {
		return err
	}
	return c.ok(http.StatusOK, cmd)
}

func (h *Handler) cancelCommand(c *call) error {
	if _, err := decode[struct{}](c.body, true); err != nil {
		return err
	}
	cmd, err := h.svc.CancelCommand(c.r.Context(), c.p, c.r.PathValue("command_id"))
	if err != nil {
		return err
	}
	return c.ok(http.StatusOK, cmd)
}

// The document's words on commands.

func descCommands() string {
	return "A command to a device: cut or restore the engine, ask for a position now, change the reporting interval, switch an output, reboot, " +
		"or send the protocol's own text. It goes to the device at once if the device is connected to any server sharing the store, else when it next " +
		"connects (OsmAnd: in the answer to its next report), in the order queued. `sent` once written to the device's connection, `delivered` with " +
		"`result` once the protocol acknowledges it (Teltonika's codec 12 response, GT06's answer, the text protocols' reply); a device that cannot " +
		"acknowledge stays `sent`. Still queued at `expires_at`: `expired`. " +
		fmt.Sprintf("An `engine_stop` is held (queued, the reason in `error`) while the device's latest report shows %.0f km/h or more, ", fleet.EngineStopMaxSpeed) +
		"and sent once a report shows it slower, unless `force` (recorded). An `engine_stop` and an `engine_resume` queued for one device: the later " +
		"cancels the earlier. Each change emits `command.queued`, `command.sent`, `command.delivered`, `command.failed` or `command.expired` " +
		"with the command (cancelling emits none)."
}

func descCreateCommand() string {
	return "Queues a command (202: it is delivered as described on the command object). The members a type takes: `set_interval` " +
		fmt.Sprintf("`seconds` (%d to %d), `output` `index` (1 to %d) and `on`, `custom` `text` (printable, no control characters) or `hex`, ",
			fleet.MinCommandInterval, fleet.MaxCommandInterval, fleet.MaxOutputIndex) +
		"`engine_stop` `force`; another type's member is 422 naming it. A type the device's protocol (the one it last spoke) cannot carry is " +
		"409 conflict whose message lists the types it can; a `custom` text or hex longer than the protocol carries is 422. " +
		fmt.Sprintf("A device has at most %d commands queued: one more is 409 conflict. ", fleet.MaxQueuedCommands) +
		"The command records its creator (`created_by`: the API key's id, or the dashboard user's). Needs `devices:command`, which `devices:write` does not imply."
}

func registerCommandComponents(g *generator) {
	whole[fleet.CommandStatus](g, "CommandStatus", func() *obj {
		return enum(fleet.CommandStatuses(), "queued -> sent -> delivered, or failed, expired or cancelled: "+statusDesc(fleet.CommandStatuses(), fleet.CommandMoves)+
			" A sent command goes back to queued only when its device's connection closed before it was written.")
	})
	typ := func() *obj {
		return enum(fleet.CommandTypes(), "engine_stop and engine_resume (the immobiliser's output), position_request (a position now), set_interval (the reporting interval), "+
			"output (switch a digital output), reboot, custom (the protocol's own text or bytes).")
	}
	comp[fleet.Command](g, "Command", output, func(s *shape) {
		s.describe(descCommands()).
			replace("command_id", id(fleet.PrefixCommand)).
			replace("device_id", id(fleet.PrefixDevice)).
			replace("type", typ()).
			with("seconds", "description", "set_interval: the reporting interval in seconds; null for other types.").
			with("index", "description", "output: the output's number, from 1; null for other types.").
			with("on", "description", "output: switched on (true) or off; null for other types.").
			null("text hex result error").
			with("text", "description", "custom: the protocol's own text; null otherwise.").
			with("hex", "description", "custom: the protocol's own bytes, as hex digits; null otherwise.").
			with("force", "description", "engine_stop: sent whatever the vehicle's speed.").
			replace("status", ref("CommandStatus")).
			with("result", "description", "The device's answer, as text, once delivered; null before, or when it sends none.").
			with("error", "description", "Why the command is held, failed, expired or was cancelled; null otherwise.").
			with("created_by", "description", "Who sent it: the API key's id, or the dashboard user's id.").
			with("expires_at", "description", "When it stops waiting for the device.").
			with("sent_at", "description", "When it was written to the device's connection; null before.").
			with("delivered_at", "description", "When the device acknowledged it; null before.")
	})
	comp[fleetwire.CommandInput](g, "CommandInput", input, func(s *shape) {
		s.describe(descCreateCommand()).
			require("type").replace("type", typ()).
			with("seconds", "minimum", fleet.MinCommandInterval, "maximum", fleet.MaxCommandInterval, "description", "set_interval only: the reporting interval in seconds.").
			with("index", "minimum", 1, "maximum", fleet.MaxOutputIndex, "description", "output only: the output's number.").
			with("on", "description", "output only: switch it on (true) or off.").
			with("text", "minLength", 1, "maxLength", fleet.MaxCommandText, "description", "custom only: the protocol's own text, e.g. Teltonika's `getver`. No control characters.").
			with("hex", "pattern", "^([0-9A-Fa-f]{2})+$", "maxLength", 2*fleet.MaxCommandHex, "description", "custom only: the protocol's own bytes, two hex digits each.").
			with("force", "description", "engine_stop only: send it whatever the vehicle's speed (recorded on the command).").
			with("expires_at", "description", fmt.Sprintf("When it stops waiting for the device: in the future, at most %d days ahead; default 24 hours after now.",
				int(fleet.MaxCommandTTL.Hours()/24)))
	})
}

// commandStatuses is the status filter's values, for the document.
func commandStatuses() string {
	var out []string
	for _, s := range fleet.CommandStatuses() {
		out = append(out, string(s))
	}
	return strings.Join(out, ", ")
}
