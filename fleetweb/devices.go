package fleetweb

import (
	"cmp"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/fleetkit/fleetapi/fleet"
)

// The devices' pages: register a tracker or a phone app against a vehicle
// (with what to type into it: the server's address and the protocol's
// port, or the Traccar Client's URL), a device's page with its last report
// and its attributes, moving it to another vehicle, and removing it. Each
// form goes through the devices' use cases with the person's principal
// (devices:write: an admin or a manager).

// DeviceListener is one protocol the server listens on for devices, as a
// device's pages show it to whoever sets a tracker up.
type DeviceListener struct {
	// Protocol is the protocol's name as in --devices ("teltonika").
	Protocol string
	// Port is the port the listener is bound to.
	Port int
	// Transports are how devices reach it: "tcp", "udp", or "http" for
	// OsmAnd (the Traccar Client).
	Transports []string
}

// maxVehicleChoices is how many vehicles a device's form offers, by name.
const maxVehicleChoices = maxListed

// connectRow is what to type into a tracker of one protocol.
type connectRow struct {
	Protocol, Label string
	Host            string
	Port            int
	Transports      string // "TCP or UDP"
	ClientURL       string // the Traccar Client's server URL; "" but for OsmAnd
	Chosen          bool
}

// connectRows says, for each protocol the server listens on, the address
// and port a tracker is set to; host is the server's name as this
// dashboard is reached (Options.PublicURL's, or the request's).
func (h *Handler) connectRows(r *http.Request, chosen string) []connectRow {
	if h.opts.DeviceListeners == nil {
		return nil
	}
	host := h.deviceHost(r)
	var rows []connectRow
	for _, l := range h.opts.DeviceListeners() {
		row := connectRow{Protocol: l.Protocol, Label: cmp.Or(protocolNames[l.Protocol], l.Protocol), Host: host, Port: l.Port,
			Chosen: l.Protocol == chosen}
		var ts []string
		for _, t := range l.Transports {
			ts = append(ts, strings.ToUpper(t))
			if t == "http" {
				row.ClientURL = "http://" + net.JoinHostPort(host, strconv.Itoa(l.Port))
			}
		}
		row.Transports = strings.Join(ts, " or ")
		rows = append(rows, row)
	}
	return rows
}

// deviceHost is the server's host name as people reach the dashboard.
func (h *Handler) deviceHost(r *http.Request) string {
	u, err := url.Parse(h.baseURL(r))
	if err != nil || u.Hostname() == "" {
		return "this server's address"
	}
	return u.Hostname()
}

// deviceForm is the register and change forms as typed, with their
// mistakes by field.
type deviceForm struct {
	Identifier, Name, VehicleID, Protocol string
	Errors                                map[string]string
}

type vehicleChoice struct{ ID, Name string }

// vehicleChoices are the account's vehicles a form offers, by name, at
// most maxVehicleChoices; more says whether it has others.
func (h *Handler) vehicleChoices(ctx context.Context, p fleet.Principal) ([]vehicleChoice, bool, error) {
	vs, more, err := walk(ctx, maxVehicleChoices, func(q fleet.ListQuery) (fleet.List[fleet.Vehicle], error) {
		return h.svc.ListVehicles(ctx, p, fleet.VehicleFilter{}, q)
	})
	if err != nil {
		return nil, false, err
	}
	ptrs := make([]*fleet.Vehicle, len(vs))
	for i := range vs {
		ptrs[i] = &vs[i]
	}
	sortVehicles(ptrs, "name")
	out := make([]vehicleChoice, len(ptrs))
	for i, v := range ptrs {
		out[i] = vehicleChoice{ID: v.ID, Name: v.Name}
	}
	return out, more, nil
}

type newDeviceData struct {
	Vehicle fleet.Vehicle
	Form    deviceForm
	Connect []connectRow
}

// newDevicePage shows the form that registers a device to a vehicle, and
// what to type into it.
func (h *Handler) newDevicePage(w http.ResponseWriter, r *http.Request, us fleet.UserSession) {
	if !h.mayChange(w, r, us, fleet.PermDevicesWrite) {
		return
	}
	v, err := h.svc.Vehicle(r.Context(), us.Principal(), r.PathValue("vehicle_id"))
	if err != nil {
		h.fail(w, r, &us, err)
		return
	}
	f := deviceForm{Protocol: r.URL.Query().Get("protocol")}
	h.render(w, http.StatusOK, "deviceform", page{Title: "Register a device for " + v.Name, Nav: "vehicles", User: &us,
		Data: newDeviceData{Vehicle: v, Form: f, Connect: h.connectRows(r, f.Protocol)}})
}

// addDevice registers a device to the vehicle with the CreateDevice use
// case and leads to the device's page.
func (h *Handler) addDevice(w http.ResponseWriter, r *http.Request, us fleet.UserSession) {
	ctx := r.Context()
	v, err := h.svc.Vehicle(ctx, us.Principal(), r.PathValue("vehicle_id"))
	if err != nil {
		h.fail(w, r, &us, err)
		return
	}
	f := deviceForm{Identifier: r.PostFormValue("identifier"), Name: r.PostFormValue("name"), Protocol: r.PostFormValue("protocol")}
	d, err := h.svc.CreateDevice(ctx, us.Principal(), fleet.Device{Identifier: f.Identifier, Name: f.Name, VehicleID: v.ID})
	if err != nil {
		p := page{Title: "Register a device for " + v.Name, Nav: "vehicles", User: &us}
		errorPage(&p, err)
		deviceFields(&p)
		f.Errors = errorsOf(p)
		if fleet.ErrorCode(err) == fleet.CodeConflict && f.Errors["device_identifier"] == "" {
			f.Errors["device_identifier"] = p.Error // taken, here or by another account
		}
		p.Data = newDeviceData{Vehicle: v, Form: f, Connect: h.connectRows(r, f.Protocol)}
		h.render(w, statusOf(err), "deviceform", p)
		return
	}
	q := url.Values{"notice": {h.noticeOnce(r, deviceName(d)+" is registered to "+v.Name+".")}}
	if f.Protocol != "" {
		q.Set("protocol", f.Protocol)
	}
	http.Redirect(w, r, "/devices/"+url.PathEscape(d.ID)+"?"+q.Encode(), http.StatusSeeOther)
}

// deviceFields names a device's identifier as its forms do: the use
// cases call it "identifier", which the drivers' forms label Driver key.
func deviceFields(p *page) {
	for i, f := range p.Fields {
		if f.Field == "identifier" {
			p.Fields[i].Field = "device_identifier"
		}
	}
}

func deviceName(d fleet.Device) string { return cmp.Or(d.Name, d.Identifier) }

type attribute struct{ Name, Value string }

type deviceData struct {
	Device      fleet.Device
	Name        string
	VehicleName string
	Protocol    string
	LastSeen    string
	Report      *deviceReport
	Connect     []connectRow
	Form        deviceForm
	Vehicles    []vehicleChoice
	More        bool
}

// deviceReport is a device's last report as its page shows it.
type deviceReport struct {
	Received, At, Position, Speed, Heading, Altitude, Satellites string
	Valid, Stored                                                bool
	Why                                                          string
	Attributes                                                   []attribute
}

// devicePage shows one device: its vehicle, its last report with its
// attributes, what to type into it, and (for whom may) the forms that
// move, rename and remove it.
func (h *Handler) devicePage(w http.ResponseWriter, r *http.Request, us fleet.UserSession) {
	d, err := h.svc.Device(r.Context(), us.Principal(), r.PathValue("device_id"))
	if err != nil {
		h.fail(w, r, &us, err)
		return
	}
	p := page{Title: deviceName(d), Nav: "vehicles", User: &us}
	if n, ok := h.takeNotice(r); ok {
		if s, ok := n.(string); ok {
			p.Notice = s
		}
	}
	h.showDevice(w, r, us, http.StatusOK, p, d, deviceForm{Name: d.Name, VehicleID: d.VehicleID})
}

func (h *Handler) showDevice(w http.ResponseWriter, r *http.Request, us fleet.UserSession, status int, p page, d fleet.Device, f deviceForm) {
	ctx := r.Context()
	pr := us.Principal()
	loc, _, _ := zoneOf(r)
	now := h.svc.Now()
	dd := deviceData{Device: d, Name: deviceName(d), Protocol: "—", LastSeen: "never", Form: f}
	if d.Protocol != "" {
		dd.Protocol = cmp.Or(protocolNames[d.Protocol], d.Protocol)
	}
	if d.LastSeenAt != nil {
		dd.LastSeen = localTime(*d.LastSeenAt, loc) + " (" + ago(*d.LastSeenAt, now) + ")"
	}
	name, err := h.vehicleName(ctx, pr, d.VehicleID, map[string]string{})
	if err != nil {
		h.fail(w, r, &us, err)
		return
	}
	dd.VehicleName = name
	if rep := d.LastReport; rep != nil {
		pos := rep.Position
		dr := &deviceReport{Received: localTime(rep.ReceivedAt, loc) + " (" + ago(rep.ReceivedAt, now) + ")", At: localTime(pos.Timestamp, loc),
			Position: coords(pos.Latitude, pos.Longitude), Speed: "—", Heading: "—", Altitude: "—", Satellites: "—",
			Valid: pos.Valid, Stored: rep.Stored, Why: cmp.Or(reasonWords[rep.Reason], rep.Reason)}
		if pos.Speed != nil {
			dr.Speed = speed(*pos.Speed)
		}
		if pos.Heading != nil {
			dr.Heading = strconv.FormatFloat(*pos.Heading, 'f', -1, 64) + "°"
		}
		if pos.Altitude != nil {
			dr.Altitude = strconv.FormatFloat(*pos.Altitude, 'f', -1, 64) + " m"
		}
		if pos.Satellites != nil {
			dr.Satellites = strconv.Itoa(*pos.Satellites)
		}
		for _, a := range pos.Attrs.Clone().Sort() {
			dr.Attributes = append(dr.Attributes, attribute{Name: a.Name, Value: fmt.Sprint(a.Value())})
		}
		dd.Report = dr
	}
	chosen := cmp.Or(r.URL.Query().Get("protocol"), d.Protocol)
	dd.Connect = h.connectRows(r, chosen)
	if us.Can(fleet.PermDevicesWrite) {
		if dd.Vehicles, dd.More, err = h.vehicleChoices(ctx, pr); err != nil {
			h.fail(w, r, &us, err)
			return
		}
		dd.Vehicles = h.withChosen(ctx, pr, dd.Vehicles, dd.Form.VehicleID)
	}
	p.Data = dd
	h.render(w, status, "device", p)
}

// saveDevice moves (or detaches, with no vehicle) and renames a device
// with the UpdateDevice use case.
func (h *Handler) saveDevice(w http.ResponseWriter, r *http.Request, us fleet.UserSession) {
	ctx := r.Context()
	id := r.PathValue("device_id")
	f := deviceForm{Name: r.PostFormValue("name"), VehicleID: r.PostFormValue("vehicle_id")}
	d, err := h.svc.UpdateDevice(ctx, us.Principal(), id, fleet.DevicePatch{VehicleID: fleet.Some(f.VehicleID), Name: fleet.Some(f.Name)})
	if err != nil {
		old, gerr := h.svc.Device(ctx, us.Principal(), id)
		if gerr != nil {
			h.fail(w, r, &us, gerr)
			return
		}
		p := page{Title: deviceName(old), Nav: "vehicles", User: &us}
		errorPage(&p, err)
		f.Errors = errorsOf(p)
		h.showDevice(w, r, us, statusOf(err), p, old, f)
		return
	}
	notice := deviceName(d) + " belongs to no vehicle now: its reports are kept as its last report only."
	if d.VehicleID != "" {
		name, err := h.vehicleName(ctx, us.Principal(), d.VehicleID, map[string]string{})
		if err != nil {
			h.fail(w, r, &us, err)
			return
		}
		notice = deviceName(d) + " reports for " + name + " from its next message on."
	}
	http.Redirect(w, r, "/devices/"+url.PathEscape(d.ID)+"?notice="+h.noticeOnce(r, notice), http.StatusSeeOther)
}

// deleteDevicePage asks to confirm a device's removal, naming it and its
// vehicle.
func (h *Handler) deleteDevicePage(w http.ResponseWriter, r *http.Request, us fleet.UserSession) {
	if !h.mayChange(w, r, us, fleet.PermDevicesWrite) {
		return
	}
	ctx := r.Context()
	d, err := h.svc.Device(ctx, us.Principal(), r.PathValue("device_id"))
	if err != nil {
		h.fail(w, r, &us, err)
		return
	}
	name, err := h.vehicleName(ctx, us.Principal(), d.VehicleID, map[string]string{})
	if err != nil {
		h.fail(w, r, &us, err)
		return
	}
	h.render(w, http.StatusOK, "deletedevice", page{Title: "Remove a device", Nav: "vehicles", User: &us,
		Data: deviceData{Device: d, Name: deviceName(d), VehicleName: name}})
}

// deleteDevice removes a device with the DeleteDevice use case and leads
// back to its vehicle.
func (h *Handler) deleteDevice(w http.ResponseWriter, r *http.Request, us fleet.UserSession) {
	ctx := r.Context()
	d, err := h.svc.Device(ctx, us.Principal(), r.PathValue("device_id"))
	if err == nil {
		_, err = h.svc.DeleteDevice(ctx, us.Principal(), d.ID)
	}
	if err != nil {
		h.fail(w, r, &us, err)
		return
	}
	to := "/vehicles"
	if d.VehicleID != "" {
		to = "/vehicles/" + url.PathEscape(d.VehicleID)
	}
	http.Redirect(w, r, to+"?notice="+h.noticeOnce(r, deviceName(d)+" is removed: its identifier "+d.Identifier+" is unknown to the server from now on."), http.StatusSeeOther)
}

type unknownData struct {
	Devices []fleet.UnknownDevice
}

// unknownDevicesPage lists the identifiers that tried to reach the server
// without being registered (Operator.UnknownDevices: every account's, so
// only with Options.UnknownDevices), the last seen first, each with
// Register this…, for an admin.
func (h *Handler) unknownDevicesPage(w http.ResponseWriter, r *http.Request, us fleet.UserSession) {
	if !h.opts.UnknownDevices {
		h.notFound(w, r)
		return
	}
	if !us.IsAdmin() {
		h.fail(w, r, &us, fleet.Errorf(fleet.CodeInsufficientPermissions, "Only an admin of the account sees the unknown devices."))
		return
	}
	l, err := h.svc.Operator().UnknownDevices(r.Context(), 0)
	if err != nil {
		h.fail(w, r, &us, err)
		return
	}
	h.render(w, http.StatusOK, "unknowndevices", page{Title: "Unknown devices", Nav: "vehicles", User: &us, Data: unknownData{Devices: l}})
}

type registerData struct {
	Form     deviceForm
	Vehicles []vehicleChoice
	More     bool
	Connect  []connectRow
}

// registerDevicePage shows the form that registers a device to a vehicle
// chosen in it (an unknown device's Register this…: ?identifier=).
func (h *Handler) registerDevicePage(w http.ResponseWriter, r *http.Request, us fleet.UserSession) {
	if !h.mayChange(w, r, us, fleet.PermDevicesWrite) {
		return
	}
	q := r.URL.Query()
	h.showRegister(w, r, us, http.StatusOK, page{Title: "Register a device", Nav: "vehicles", User: &us},
		deviceForm{Identifier: q.Get("identifier"), Protocol: q.Get("protocol")})
}

func (h *Handler) showRegister(w http.ResponseWriter, r *http.Request, us fleet.UserSession, status int, p page, f deviceForm) {
	vs, more, err := h.vehicleChoices(r.Context(), us.Principal())
	if err != nil {
		h.fail(w, r, &us, err)
		return
	}
	vs = h.withChosen(r.Context(), us.Principal(), vs, f.VehicleID)
	p.Data = registerData{Form: f, Vehicles: vs, More: more, Connect: h.connectRows(r, f.Protocol)}
	h.render(w, status, "registerdevice", p)
}

// registerDevice registers a device to the vehicle chosen in the form
// (CreateDevice) and leads to the device's page.
func (h *Handler) registerDevice(w http.ResponseWriter, r *http.Request, us fleet.UserSession) {
	v := r.PostFormValue
	f := deviceForm{Identifier: v("identifier"), Name: v("name"), VehicleID: v("vehicle_id"), Protocol: v("protocol")}
	if f.VehicleID == "" && us.Can(fleet.PermDevicesWrite) {
		p := page{Title: "Register a device", Nav: "vehicles", User: &us, Error: "Please correct the form:",
			Fields: []fleet.FieldError{{Field: "vehicle_id", Message: "is required: choose the vehicle it rides in"}}}
		f.Errors = errorsOf(p)
		h.showRegister(w, r, us, http.StatusUnprocessableEntity, p, f)
		return
	}
	d, err := h.svc.CreateDevice(r.Context(), us.Principal(), fleet.Device{Identifier: f.Identifier, Name: f.Name, VehicleID: f.VehicleID})
	if err != nil {
		if fleet.ErrorCode(err) == fleet.CodeInsufficientPermissions {
			h.fail(w, r, &us, err)
			return
		}
		p := page{Title: "Register a device", Nav: "vehicles", User: &us}
		errorPage(&p, err)
		deviceFields(&p)
		f.Errors = errorsOf(p)
		if fleet.ErrorCode(err) == fleet.CodeConflict && f.Errors["device_identifier"] == "" {
			f.Errors["device_identifier"] = p.Error
		}
		h.showRegister(w, r, us, statusOf(err), p, f)
		return
	}
	http.Redirect(w, r, "/devices/"+url.PathEscape(d.ID)+"?notice="+h.noticeOnce(r, deviceName(d)+" is registered: its next message is stored."), http.StatusSeeOther)
}
