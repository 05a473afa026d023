package fleetweb

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/fleetkit/fleetapi/fleet"
)

// The vehicles' forms: add a vehicle, change it, delete it after a
// question that names it. Each goes through the vehicles' use cases with
// the person's principal (vehicles:write: an admin or a manager); a
// refused form is shown again with what was typed and each mistake beside
// its field.

// vehicleForm is what the add and edit forms hold: the fields as typed,
// and the mistakes found, as sentences by field.
type vehicleForm struct {
	Name, VIN, Make, Model, Year, LicensePlate, ExternalID, Tags, OdometerKm string
	Errors                                                                   map[string]string
}

func vehicleFormOf(v fleet.Vehicle) vehicleForm {
	f := vehicleForm{Name: v.Name, VIN: v.VIN, Make: v.Make, Model: v.Model, LicensePlate: v.LicensePlate,
		ExternalID: v.ExternalID, Tags: strings.Join(v.Tags, ", ")}
	if v.Year != nil {
		f.Year = strconv.Itoa(*v.Year)
	}
	if v.OdometerKm != nil {
		f.OdometerKm = strconv.FormatFloat(*v.OdometerKm, 'f', -1, 64)
	}
	return f
}

func readVehicleForm(r *http.Request) vehicleForm {
	v := r.PostFormValue
	return vehicleForm{Name: v("name"), VIN: v("vin"), Make: v("make"), Model: v("model"), Year: v("year"),
		LicensePlate: v("license_plate"), ExternalID: v("external_id"), Tags: v("tags"), OdometerKm: v("odometer_km")}
}

// values reads the form's numbers; a field that holds no number of its
// kind is a mistake of the form (the use case judges the values).
func (f vehicleForm) values() (year *int, odometer *float64, bad []fleet.FieldError) {
	if s := strings.TrimSpace(f.Year); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			bad = append(bad, fleet.FieldError{Field: "year", Message: "must be a whole number, such as 2021"})
		} else {
			year = &n
		}
	}
	if s := strings.TrimSpace(f.OdometerKm); s != "" {
		n, err := strconv.ParseFloat(s, 64)
		if err != nil || n != n {
			bad = append(bad, fleet.FieldError{Field: "odometer_km", Message: "must be a number of kilometres, such as 120500.5"})
		} else {
			odometer = &n
		}
	}
	return year, odometer, bad
}

func (f vehicleForm) vehicle() (fleet.Vehicle, error) {
	year, odo, bad := f.values()
	if bad != nil {
		return fleet.Vehicle{}, &fleet.Error{Code: fleet.CodeValidation, Message: "Please correct the form.", Details: bad}
	}
	tags := splitTags(f.Tags)
	if tags == nil {
		tags = []string{}
	}
	return fleet.Vehicle{Name: f.Name, VIN: f.VIN, Make: f.Make, Model: f.Model, Year: year, LicensePlate: f.LicensePlate,
		ExternalID: f.ExternalID, Tags: tags, OdometerKm: odo}, nil
}

// patch is the form as a merge patch: every field is sent, an empty one
// clears it.
func (f vehicleForm) patch() (fleet.VehiclePatch, error) {
	v, err := f.vehicle()
	if err != nil {
		return fleet.VehiclePatch{}, err
	}
	return fleet.VehiclePatch{Name: fleet.Some(v.Name), VIN: fleet.Some(v.VIN), Make: fleet.Some(v.Make), Model: fleet.Some(v.Model),
		Year: fleet.Some(v.Year), LicensePlate: fleet.Some(v.LicensePlate), ExternalID: fleet.Some(v.ExternalID),
		Tags: fleet.Some(v.Tags), OdometerKm: fleet.Some(v.OdometerKm)}, nil
}

type vehicleFormData struct {
	Vehicle fleet.Vehicle // the vehicle changed; ID "" when adding one
	Form    vehicleForm
}

// mayChange refuses, with the page a refused change gets, a person whose
// role does not hold perm; it reports whether they may go on.
func (h *Handler) mayChange(w http.ResponseWriter, r *http.Request, us fleet.UserSession, perm fleet.Permission) bool {
	if us.Can(perm) {
		return true
	}
	h.fail(w, r, &us, fleet.Errorf(fleet.CodeInsufficientPermissions, "Your role cannot change this."))
	return false
}

// newVehiclePage shows the form that adds a vehicle.
func (h *Handler) newVehiclePage(w http.ResponseWriter, r *http.Request, us fleet.UserSession) {
	if !h.mayChange(w, r, us, fleet.PermVehiclesWrite) {
		return
	}
	h.render(w, http.StatusOK, "vehicleform", page{Title: "Add a vehicle", Nav: "vehicles", User: &us, Data: vehicleFormData{}})
}

// addVehicle adds a vehicle with the CreateVehicle use case and leads to
// its page.
func (h *Handler) addVehicle(w http.ResponseWriter, r *http.Request, us fleet.UserSession) {
	f := readVehicleForm(r)
	in, err := f.vehicle()
	var v fleet.Vehicle
	if err == nil {
		v, err = h.svc.CreateVehicle(r.Context(), us.Principal(), in)
	}
	if err != nil {
		p := page{Title: "Add a vehicle", Nav: "vehicles", User: &us}
		errorPage(&p, err)
		f.Errors = errorsOf(p)
		p.Data = vehicleFormData{Form: f}
		h.render(w, statusOf(err), "vehicleform", p)
		return
	}
	http.Redirect(w, r, "/vehicles/"+url.PathEscape(v.ID)+"?notice="+h.noticeOnce(r, v.Name+" is added. Register its tracker or phone below."), http.StatusSeeOther)
}

// editVehiclePage shows the form that changes a vehicle.
func (h *Handler) editVehiclePage(w http.ResponseWriter, r *http.Request, us fleet.UserSession) {
	if !h.mayChange(w, r, us, fleet.PermVehiclesWrite) {
		return
	}
	v, err := h.svc.Vehicle(r.Context(), us.Principal(), r.PathValue("vehicle_id"))
	if err != nil {
		h.fail(w, r, &us, err)
		return
	}
	h.render(w, http.StatusOK, "vehicleform", page{Title: "Change " + v.Name, Nav: "vehicles", User: &us,
		Data: vehicleFormData{Vehicle: v, Form: vehicleFormOf(v)}})
}

// saveVehicle changes a vehicle with the UpdateVehicle use case: every
// field of the form, an empty one cleared.
func (h *Handler) saveVehicle(w http.ResponseWriter, r *http.Request, us fleet.UserSession) {
	ctx := r.Context()
	f := readVehicleForm(r)
	id := r.PathValue("vehicle_id")
	patch, err := f.patch()
	var v fleet.Vehicle
	if err == nil {
		v, err = h.svc.UpdateVehicle(ctx, us.Principal(), id, patch)
	}
	if err != nil {
		old, gerr := h.svc.Vehicle(ctx, us.Principal(), id)
		if gerr != nil {
			h.fail(w, r, &us, gerr)
			return
		}
		p := page{Title: "Change " + old.Name, Nav: "vehicles", User: &us}
		errorPage(&p, err)
		f.Errors = errorsOf(p)
		p.Data = vehicleFormData{Vehicle: old, Form: f}
		h.render(w, statusOf(err), "vehicleform", p)
		return
	}
	http.Redirect(w, r, "/vehicles/"+url.PathEscape(v.ID)+"?notice="+h.noticeOnce(r, v.Name+" is saved."), http.StatusSeeOther)
}

type deleteVehicleData struct {
	Vehicle fleet.Vehicle
	Devices []fleet.Device
}

// deleteVehiclePage asks to confirm a vehicle's deletion, naming it and
// what goes with it.
func (h *Handler) deleteVehiclePage(w http.ResponseWriter, r *http.Request, us fleet.UserSession) {
	if !h.mayChange(w, r, us, fleet.PermVehiclesWrite) {
		return
	}
	ctx := r.Context()
	v, err := h.svc.Vehicle(ctx, us.Principal(), r.PathValue("vehicle_id"))
	if err != nil {
		h.fail(w, r, &us, err)
		return
	}
	devs, _, err := walk(ctx, maxDevices, func(q fleet.ListQuery) (fleet.List[fleet.Device], error) {
		return h.svc.ListDevices(ctx, us.Principal(), fleet.DeviceFilter{VehicleID: v.ID}, q)
	})
	if err != nil {
		h.fail(w, r, &us, err)
		return
	}
	h.render(w, http.StatusOK, "deletevehicle", page{Title: "Delete a vehicle", Nav: "vehicles", User: &us,
		Data: deleteVehicleData{Vehicle: v, Devices: devs}})
}

// deleteVehicle deletes a vehicle with the DeleteVehicle use case.
func (h *Handler) deleteVehicle(w http.ResponseWriter, r *http.Request, us fleet.UserSession) {
	ctx := r.Context()
	v, err := h.svc.Vehicle(ctx, us.Principal(), r.PathValue("vehicle_id"))
	if err == nil {
		_, err = h.svc.DeleteVehicle(ctx, us.Principal(), v.ID)
	}
	if err != nil {
		h.fail(w, r, &us, err)
		return
	}
	http.Redirect(w, r, "/vehicles?notice="+h.noticeOnce(r, v.Name+" is deleted, with its location history."), http.StatusSeeOther)
}
