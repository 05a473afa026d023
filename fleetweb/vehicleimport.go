package fleetweb

import (
	"encoding/csv"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/fleetkit/fleetapi/fleet"
)

// Importing vehicles from CSV: the file (or pasted text) is read and
// judged row by row by fleet's rules, and a preview says what would be
// created, what exists already (the same external id: skipped, so that
// importing a file again creates nothing twice) and each bad row with its
// reason. Nothing is created until the preview is confirmed; the
// confirmation posts the same text again, and every good row is then
// created with CreateVehicle.

// mistake is a mistake of an import's file, said to the person as it is.
type mistake string

func (m mistake) Error() string { return string(m) }

// maxImportRows is how many vehicles one import may hold.
const maxImportRows = 1000

// importColumns are the columns a vehicles CSV may have, by their header.
var importColumns = []string{"name", "license_plate", "vin", "make", "model", "year", "external_id", "tags", "odometer_km"}

type importRow struct {
	Line    int // the row's line in the file, the header being line 1
	Vehicle fleet.Vehicle
	Form    vehicleForm
	Exists  bool     // a vehicle of the account has its external id: skipped
	Errors  []string // why the row cannot be imported, in words
}

type importData struct {
	CSV                 string
	Rows                []importRow
	New, Existing, Bad  int
	Errors              map[string]string
	Columns             string
	Previewed, Imported bool
}

// importVehiclesPage shows the form.
func (h *Handler) importVehiclesPage(w http.ResponseWriter, r *http.Request, us fleet.UserSession) {
	if !h.mayChange(w, r, us, fleet.PermVehiclesWrite) {
		return
	}
	h.render(w, http.StatusOK, "importvehicles", page{Title: "Import vehicles", Nav: "vehicles", User: &us,
		Data: importData{Columns: strings.Join(importColumns, ",")}})
}

// importVehicles previews an import, or, confirmed, makes it.
func (h *Handler) importVehicles(w http.ResponseWriter, r *http.Request, us fleet.UserSession) {
	if !h.mayChange(w, r, us, fleet.PermVehiclesWrite) {
		return
	}
	ctx := r.Context()
	text, err := importText(r)
	d := importData{CSV: text, Columns: strings.Join(importColumns, ","), Errors: map[string]string{}}
	p := page{Title: "Import vehicles", Nav: "vehicles", User: &us}
	if err == nil {
		d.Rows, err = h.judgeImport(r, us, text)
	}
	if err != nil {
		d.Errors["csv"] = err.Error()
		p.Error = "Please correct the form:"
		p.Data = d
		h.render(w, http.StatusUnprocessableEntity, "importvehicles", p)
		return
	}
	for _, row := range d.Rows {
		switch {
		case len(row.Errors) > 0:
			d.Bad++
		case row.Exists:
			d.Existing++
		default:
			d.New++
		}
	}
	if r.PostFormValue("confirm") == "" || d.Bad > 0 {
		d.Previewed = true
		p.Data = d
		h.render(w, http.StatusOK, "importvehicles", p)
		return
	}
	made := 0
	for _, row := range d.Rows {
		if row.Exists {
			continue
		}
		if _, err := h.svc.CreateVehicle(ctx, us.Principal(), row.Vehicle); err != nil {
			if fleet.ErrorCode(err) == fleet.CodeConflict { // made meanwhile: it exists
				continue
			}
			h.fail(w, r, &us, err)
			return
		}
		made++
	}
	http.Redirect(w, r, "/vehicles?notice="+h.noticeOnce(r, plural(made, "vehicle is", "vehicles are")+" imported; "+
		plural(d.Existing, "existed", "existed")+" already."), http.StatusSeeOther)
}

// importText is the CSV of the form: the file chosen, or the text pasted.
func importText(r *http.Request) (string, error) {
	if strings.HasPrefix(r.Header.Get("Content-Type"), "multipart/form-data") {
		if err := r.ParseMultipartForm(MaxFormBytes); err != nil {
			return "", mistake("The file could not be read: at most 64 KB may be imported at once.")
		}
		if f, _, err := r.FormFile("file"); err == nil {
			defer f.Close()
			b, err := io.ReadAll(io.LimitReader(f, MaxFormBytes+1))
			if err != nil || len(b) > MaxFormBytes {
				return "", mistake("The file could not be read: at most 64 KB may be imported at once.")
			}
			if len(b) > 0 {
				return string(b), nil
			}
		}
	}
	text := r.PostFormValue("csv")
	if strings.TrimSpace(text) == "" {
		return "", mistake("Choose a CSV file, or paste its text.")
	}
	return text, nil
}

// judgeImport reads the CSV and judges each row: fleet's rules on the
// vehicle, an external id the account holds already, or one given twice.
func (h *Handler) judgeImport(r *http.Request, us fleet.UserSession, text string) ([]importRow, error) {
	cr := csv.NewReader(strings.NewReader(strings.TrimPrefix(text, "\ufeff")))
	cr.FieldsPerRecord = -1
	header, err := cr.Read()
	if err != nil {
		return nil, mistake("The CSV has no header row: its first line names the columns (" + strings.Join(importColumns, ", ") + ").")
	}
	col := map[string]int{}
	for i, name := range header {
		name = strings.ToLower(strings.TrimSpace(name))
		known := false
		for _, c := range importColumns {
			known = known || c == name
		}
		if !known {
			return nil, mistake("The column " + strconv.Quote(name) + " is not one of " + strings.Join(importColumns, ", ") + ".")
		}
		col[name] = i
	}
	if _, ok := col["name"]; !ok {
		return nil, mistake("The CSV needs a name column.")
	}
	ctx := r.Context()
	all, _, err := walk(ctx, maxSortedVehicles, func(q fleet.ListQuery) (fleet.List[fleet.Vehicle], error) {
		return h.svc.ListVehicles(ctx, us.Principal(), fleet.VehicleFilter{}, q)
	})
	if err != nil {
		return nil, err
	}
	existing := map[string]bool{}
	for _, v := range all {
		if v.ExternalID != "" {
			existing[v.ExternalID] = true
		}
	}
	seen := map[string]int{}
	var rows []importRow
	now := h.svc.Now()
	for line := 2; ; line++ {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, mistake("Line " + strconv.Itoa(line) + " is not CSV: " + strings.TrimPrefix(err.Error(), "record on "))
		}
		if len(rows) == maxImportRows {
			return nil, mistake("At most " + num(maxImportRows) + " vehicles may be imported at once.")
		}
		cell := func(name string) string {
			if i, ok := col[name]; ok && i < len(rec) {
				return strings.TrimSpace(rec[i])
			}
			return ""
		}
		f := vehicleForm{Name: cell("name"), LicensePlate: cell("license_plate"), VIN: cell("vin"), Make: cell("make"), Model: cell("model"),
			Year: cell("year"), ExternalID: cell("external_id"), Tags: strings.ReplaceAll(cell("tags"), ";", ","), OdometerKm: cell("odometer_km")}
		row := importRow{Line: line, Form: f}
		v, err := f.vehicle()
		if err == nil {
			v.ExternalID = fleet.ExternalIDForm(v.ExternalID)
			err = v.Validate(now)
		}
		var fe *fleet.Error
		if errors.As(err, &fe) {
			for _, d := range fe.Details {
				row.Errors = append(row.Errors, fieldSentence(d))
			}
		}
		if ext := fleet.ExternalIDForm(f.ExternalID); ext != "" {
			if first, dup := seen[ext]; dup {
				row.Errors = append(row.Errors, "External id "+strconv.Quote(ext)+" is on line "+strconv.Itoa(first)+" too.")
			} else {
				seen[ext] = line
			}
			row.Exists = existing[ext]
		}
		row.Vehicle = v
		rows = append(rows, row)
	}
	if len(rows) == 0 {
		return nil, mistake("The CSV has a header but no vehicles.")
	}
	return rows, nil
}
