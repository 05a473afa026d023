package fleetweb

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/fleetkit/fleetapi/fleet"
)

// A vehicle's commands, on /vehicles/{vehicle_id}/commands ("Commands…" on
// the vehicle's page): each of its devices with its latest commands (type,
// status, when, who, the device's answer or why not), and, for a person
// whose role may send commands (devices:command: an admin or a manager), a form per
// device. Engine stop and resume go through a confirmation page that names
// the vehicle and says what happens while it moves. A viewer sees the
// commands and no controls.

// commandsShown is how many of a device's latest commands the page lists.
const commandsShown = 20

type commandRow struct {
	ID, Type, Status, Created, By, Note string
	Failed                              bool
}

type commandDevice struct {
	Device   fleet.Device
	Label    string
	Types    []string // the types its protocol carries (every type before its first report)
	Commands []commandRow
	More     bool
}

// commandConfirm is an engine command waiting for the person's
// confirmation.
type commandConfirm struct {
	DeviceID, DeviceLabel, Type string
	Stop                        bool
}

type commandsData struct {
	Vehicle fleet.Vehicle
	CanSend bool
	Devices []commandDevice
	More    bool // more devices than the page lists
	Confirm *commandConfirm
	Zone    string
	Limit   string // "10 km/h"
}

// canSend reports whether the person's role may send commands.
func canSend(us fleet.UserSession) bool {
	p, _ := fleet.PermissionOf("CreateCommand")
	return us.Principal().Key.Permissions.Allows(p)
}

func (h *Handler) commandsPage(w http.ResponseWriter, r *http.Request, us fleet.UserSession) {
	p := page{Nav: "vehicles", User: &us}
	if n, ok := h.takeNotice(r); ok {
		if s, ok := n.(string); ok {
			p.Notice = s
		}
	}
	h.showCommands(w, r, us, http.StatusOK, p, nil)
}

func (h *Handler) showCommands(w http.ResponseWriter, r *http.Request, us fleet.UserSession, status int, p page, confirm *commandConfirm) {
	ctx := r.Context()
	pr := us.Principal()
	v, err := h.svc.Vehicle(ctx, pr, r.PathValue("vehicle_id"))
	if err != nil {
		h.fail(w, r, &us, err)
		return
	}
	devs, err := h.svc.ListDevices(ctx, pr, fleet.DeviceFilter{VehicleID: v.ID}, fleet.ListQuery{Limit: 20})
	if err != nil {
		h.fail(w, r, &us, err)
		return
	}
	loc, _, _ := zoneOf(r)
	d := commandsData{Vehicle: v, CanSend: canSend(us), More: devs.HasMore, Confirm: confirm, Zone: loc.String(),
		Limit: fmt.Sprintf("%.0f km/h", fleet.EngineStopMaxSpeed)}
	for _, dev := range devs.Items {
		cd := commandDevice{Device: dev, Label: deviceLabel(dev), Types: h.commandTypes(dev.Protocol)}
		l, err := h.svc.ListCommands(ctx, pr, dev.ID, fleet.CommandFilter{}, fleet.ListQuery{Limit: commandsShown})
		if err != nil {
			h.fail(w, r, &us, err)
			return
		}
		cd.More = l.HasMore
		for _, c := range l.Items {
			row := commandRow{ID: c.ID, Type: commandWords(c), Status: string(c.Status), Created: localTime(c.CreatedAt, loc), By: c.CreatedBy,
				Failed: c.Status == fleet.CommandFailed || c.Status == fleet.CommandExpired}
			switch {
			case c.Result != "":
				row.Note = c.Result
			case c.Error != "":
				row.Note = c.Error
			}
			if c.CreatedBy == us.User.ID {
				row.By = "you"
			}
			cd.Commands = append(cd.Commands, row)
		}
		d.Devices = append(d.Devices, cd)
	}
	p.Title = v.Name + ": commands"
	p.Data = d
	h.render(w, status, "commands", p)
}

// commandTypes are the types a device speaking protocol can carry, as the
// service was told (every type when it was not, or before the device's
// first report).
func (h *Handler) commandTypes(protocol string) []string {
	if pc, ok := h.svc.CommandProtocols()[protocol]; ok && protocol != "" {
		return pc.Types
	}
	return fleet.CommandTypes()
}

func deviceLabel(d fleet.Device) string {
	if d.Name != "" && d.Name != d.Identifier {
		return d.Name + " (" + d.Identifier + ")"
	}
	return d.Identifier
}

// commandWords says what a command does, in a few words.
func commandWords(c fleet.Command) string {
	switch c.Type {
	case fleet.CommandEngineStop:
		if c.Force {
			return "engine stop (forced)"
		}
		return "engine stop"
	case fleet.CommandEngineResume:
		return "engine resume"
	case fleet.CommandPositionRequest:
		return "position now"
	case fleet.CommandSetInterval:
		if c.Seconds != nil {
			return "report every " + strconv.Itoa(*c.Seconds) + " s"
		}
	case fleet.CommandOutput:
		if c.Index != nil && c.On != nil {
			state := "off"
			if *c.On {
				state = "on"
			}
			return "output " + strconv.Itoa(*c.Index) + " " + state
		}
	case fleet.CommandReboot:
		return "reboot"
	case fleet.CommandCustom:
		if c.Text != "" {
			return "custom: " + c.Text
		}
		return "custom: 0x" + c.Hex
	}
	return strings.ReplaceAll(c.Type, "_", " ")
}

// sendCommand queues a command with the CreateCommand use case; an engine
// stop or resume first shows the confirmation, and goes once confirmed.
func (h *Handler) sendCommand(w http.ResponseWriter, r *http.Request, us fleet.UserSession) {
	ctx := r.Context()
	pr := us.Principal()
	vehicleID, deviceID, typ := r.PathValue("vehicle_id"), r.PostFormValue("device_id"), r.PostFormValue("type")
	dev, err := h.svc.Device(ctx, pr, deviceID)
	if err == nil && dev.VehicleID != vehicleID {
		err = fleet.NotFound("device", deviceID) // another vehicle's
	}
	if err != nil {
		h.fail(w, r, &us, err)
		return
	}
	if !canSend(us) {
		p := page{Nav: "vehicles", User: &us}
		errorPage(&p, pr.Require(fleet.PermDevicesCommand))
		h.showCommands(w, r, us, http.StatusForbidden, p, nil)
		return
	}
	in := fleet.CommandInput{Type: typ, Force: r.PostFormValue("force") == "yes"}
	var v fleet.Validator
	number := func(field string) *int {
		s := strings.TrimSpace(r.PostFormValue(field))
		if s == "" {
			return nil
		}
		n, err := strconv.Atoi(s)
		if err != nil {
			v.Add(field, "must be a whole number")
			return nil
		}
		return &n
	}
	switch typ {
	case fleet.CommandSetInterval:
		in.Seconds = number("seconds")
	case fleet.CommandOutput:
		in.Index = number("index")
		on := r.PostFormValue("state") == "on"
		in.On = &on
	case fleet.CommandCustom:
		text := r.PostFormValue("text")
		in.Text = &text
	}
	if err := v.Err(); err != nil {
		p := page{Nav: "vehicles", User: &us}
		errorPage(&p, err)
		h.showCommands(w, r, us, statusOf(err), p, nil)
		return
	}
	if (typ == fleet.CommandEngineStop || typ == fleet.CommandEngineResume) && r.PostFormValue("confirm") != "yes" {
		p := page{Nav: "vehicles", User: &us}
		h.showCommands(w, r, us, http.StatusOK, p, &commandConfirm{DeviceID: dev.ID, DeviceLabel: deviceLabel(dev), Type: typ,
			Stop: typ == fleet.CommandEngineStop})
		return
	}
	c, err := h.svc.CreateCommand(ctx, pr, dev.ID, in)
	if err != nil {
		if fleet.ErrorCode(err) == fleet.CodeNotFound {
			h.fail(w, r, &us, err)
			return
		}
		p := page{Nav: "vehicles", User: &us}
		errorPage(&p, err)
		h.showCommands(w, r, us, statusOf(err), p, nil)
		return
	}
	notice := "The " + commandWords(c) + " command is queued for " + deviceLabel(dev) + ": it goes to the device as soon as it is connected."
	if c.Error != "" {
		notice = "The " + commandWords(c) + " command is queued for " + deviceLabel(dev) + ". " + c.Error
	}
	http.Redirect(w, r, "/vehicles/"+vehicleID+"/commands?notice="+h.noticeOnce(r, notice), http.StatusSeeOther)
}

// cancelCommand cancels one of the vehicle's queued commands.
func (h *Handler) cancelCommand(w http.ResponseWriter, r *http.Request, us fleet.UserSession) {
	ctx := r.Context()
	pr := us.Principal()
	vehicleID, id := r.PathValue("vehicle_id"), r.PathValue("command_id")
	c, err := h.svc.Command(ctx, pr, id)
	if err == nil {
		var dev fleet.Device
		dev, err = h.svc.Device(ctx, pr, c.DeviceID)
		if err == nil && dev.VehicleID != vehicleID {
			err = fleet.NotFound("command", id)
		}
	}
	if err == nil {
		c, err = h.svc.CancelCommand(ctx, pr, id)
	}
	if err != nil {
		if fleet.ErrorCode(err) == fleet.CodeNotFound {
			h.fail(w, r, &us, err)
			return
		}
		p := page{Nav: "vehicles", User: &us}
		errorPage(&p, err)
		h.showCommands(w, r, us, statusOf(err), p, nil)
		return
	}
	http.Redirect(w, r, "/vehicles/"+vehicleID+"/commands?notice="+h.noticeOnce(r, "The "+commandWords(c)+" command is cancelled."), http.StatusSeeOther)
}
