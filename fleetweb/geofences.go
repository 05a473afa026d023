package fleetweb

import (
	"context"
	"errors"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/fleetkit/fleetapi/fleet"
)

// The geofences' pages: the account's geofences on a map and in a list,
// and, for whoever may change them, a form that draws a circle or a
// polygon on the map or takes it typed (a centre and a radius, or one
// corner a line), the same form to change one, and a deletion after a
// question that names the rules that watch it. Every form goes through the
// geofences' use cases with the person's principal; a refused one is shown
// again with what was typed and each mistake beside its field.

// Shapes the form offers.
const (
	shapeCircle  = "circle"
	shapePolygon = "polygon"
)

// fenceForm is what the geofence form holds: the fields as typed, the
// holes of the polygon being changed (the form edits its outer ring and
// keeps them), and the mistakes, as sentences by form field.
type fenceForm struct {
	Name, Shape, Lat, Lon, Radius, Corners string
	Holes                                  [][][]float64
	Errors                                 map[string]string
}

// fenceFormOf is the form of a stored geofence.
func fenceFormOf(g fleet.Geofence) fenceForm {
	f := fenceForm{Name: g.Name}
	switch g.Geometry.Type {
	case fleet.GeometryPoint:
		f.Shape = shapeCircle
		if len(g.Geometry.Point) >= 2 {
			f.Lat, f.Lon = degrees(g.Geometry.Point[1]), degrees(g.Geometry.Point[0])
		}
		if g.RadiusM != nil {
			f.Radius = strconv.FormatFloat(*g.RadiusM, 'f', -1, 64)
		}
	default:
		f.Shape = shapePolygon
		if len(g.Geometry.Rings) > 0 {
			ring := g.Geometry.Rings[0]
			var b strings.Builder
			for i, p := range ring {
				if i == len(ring)-1 && i > 0 && samePosition(p, ring[0]) {
					break // the closing position: the form's corners close by themselves
				}
				if len(p) >= 2 {
					b.WriteString(degrees(p[1]) + ", " + degrees(p[0]) + "\n")
				}
			}
			f.Corners = b.String()
			f.Holes = g.Geometry.Rings[1:]
		}
	}
	return f
}

func degrees(x float64) string { return strconv.FormatFloat(x, 'f', -1, 64) }

func samePosition(a, b []float64) bool {
	return len(a) >= 2 && len(b) >= 2 && a[0] == b[0] && a[1] == b[1]
}

// readFenceForm reads the form's fields as typed.
func readFenceForm(r *http.Request) fenceForm {
	v := r.PostFormValue
	return fenceForm{Name: v("name"), Shape: v("shape"), Lat: strings.TrimSpace(v("lat")), Lon: strings.TrimSpace(v("lon")),
		Radius: strings.TrimSpace(v("radius_m")), Corners: v("corners")}
}

// geofence turns the form into a geofence for the use cases: the centre
// and radius of a circle, or the corners of a polygon, closed. What cannot
// be read as numbers is said by field; every rule on the values is the
// use case's.
func (f fenceForm) geofence() (fleet.Geofence, []fleet.FieldError) {
	g := fleet.Geofence{Name: f.Name}
	var bad []fleet.FieldError
	switch f.Shape {
	case shapeCircle:
		lat, err1 := strconv.ParseFloat(f.Lat, 64)
		lon, err2 := strconv.ParseFloat(f.Lon, 64)
		if err1 != nil || err2 != nil {
			bad = append(bad, fleet.FieldError{Field: "centre", Message: "must be a latitude and a longitude in degrees, such as 52.52 and 13.405"})
		}
		g.Geometry = fleet.Geometry{Type: fleet.GeometryPoint, Point: []float64{lon, lat}}
		if r, err := strconv.ParseFloat(f.Radius, 64); err != nil {
			bad = append(bad, fleet.FieldError{Field: "radius_m", Message: "must be a number of metres, such as 250"})
		} else {
			g.RadiusM = &r
		}
	case shapePolygon:
		var ring [][]float64
		for i, line := range strings.Split(strings.TrimSpace(f.Corners), "\n") {
			line = strings.TrimSpace(line)
			if line == "" {
				continue
			}
			fields := strings.FieldsFunc(line, func(r rune) bool { return r == ',' || r == ';' || r == ' ' || r == '\t' })
			var lat, lon float64
			var err1, err2 error
			if len(fields) == 2 {
				lat, err1 = strconv.ParseFloat(fields[0], 64)
				lon, err2 = strconv.ParseFloat(fields[1], 64)
			}
			if len(fields) != 2 || err1 != nil || err2 != nil {
				bad = append(bad, fleet.FieldError{Field: "corners", Message: "line " + strconv.Itoa(i+1) + " must be a latitude and a longitude, such as 52.52, 13.405"})
				break
			}
			ring = append(ring, []float64{lon, lat})
		}
		if len(ring) > 0 && !samePosition(ring[0], ring[len(ring)-1]) {
			ring = append(ring, []float64{ring[0][0], ring[0][1]})
		}
		g.Geometry = fleet.Geometry{Type: fleet.GeometryPolygon, Rings: append([][][]float64{ring}, f.Holes...)}
	default:
		bad = append(bad, fleet.FieldError{Field: "shape", Message: "must be a circle or a polygon"})
	}
	return g, bad
}

// judged is the domain's judgement of what the form could read, its
// mistakes named as the form names its fields (a position the form could
// not read is said already).
func (f fenceForm) judged(g fleet.Geofence) error {
	err := g.Validate()
	var fe *fleet.Error
	if errors.As(err, &fe) {
		for i, d := range fe.Details {
			fe.Details[i].Field = f.fieldOf(d.Field)
		}
	}
	return err
}

// patch is the form as a merge patch of every field.
func (f fenceForm) patch(g fleet.Geofence) fleet.GeofencePatch {
	return fleet.GeofencePatch{Name: fleet.Some(g.Name), Geometry: fleet.Some(&g.Geometry), RadiusM: fleet.Some(g.RadiusM)}
}

// fenceFields are the form's fields that the use cases' field names
// stand for: a position's mistake is the centre's or the corners'.
func (f fenceForm) fieldOf(apiField string) string {
	switch {
	case apiField == "name", apiField == "radius_m", apiField == "centre", apiField == "corners", apiField == "shape":
		return apiField
	case apiField == "geometry.type":
		return "shape"
	case strings.HasPrefix(apiField, "geometry"):
		if f.Shape == shapeCircle {
			return "centre"
		}
		return "corners"
	}
	return apiField
}

// cornerWords words a use case's message about the polygon's positions
// as the form speaks of its corners: one a line, the ring closed by
// itself.
func cornerWords(fe fleet.FieldError) fleet.FieldError {
	rest, ok := strings.CutPrefix(fe.Field, "geometry.coordinates[0]")
	if !ok {
		return fe
	}
	msg := strings.Replace(fe.Message, "a linear ring must hold at least 4 positions", "must be at least 3, one a line", 1)
	msg = strings.Replace(msg, "a linear ring must hold at most", "must be at most", 1)
	if j, ok := strings.CutPrefix(rest, "["); ok {
		if n, err := strconv.Atoi(strings.TrimSuffix(j, "]")); err == nil {
			msg = "line " + strconv.Itoa(n+1) + ": " + msg
		}
	}
	return fleet.FieldError{Field: "corners", Message: msg}
}

// withErrors sets the form's mistakes from the page's fields, worded as
// the form's; p.Fields are worded the same for the list at the top.
func (f fenceForm) withErrors(p *page) fenceForm {
	f.Errors = map[string]string{}
	for i, fe := range p.Fields {
		if f.Shape == shapePolygon {
			fe = cornerWords(fe)
		}
		fe.Field = f.fieldOf(fe.Field)
		p.Fields[i] = fe
		if _, ok := f.Errors[fe.Field]; !ok {
			f.Errors[fe.Field] = fieldSentence(fe)
		}
	}
	return f
}

// fenceRow is a geofence as the list shows it.
type fenceRow struct {
	Geofence fleet.Geofence
	Shape    string // "Circle, 250 m" or "Polygon, 5 corners"
	Rules    int    // rules that watch it
}

func shapeWords(g fleet.Geofence) string {
	if g.Geometry.Type == fleet.GeometryPoint {
		if g.RadiusM == nil {
			return "Circle"
		}
		r := *g.RadiusM
		if r == math.Trunc(r) {
			return "Circle, " + num(int(r)) + " m" // 10,500 m
		}
		return "Circle, " + strconv.FormatFloat(r, 'f', -1, 64) + " m"
	}
	n := 0
	if len(g.Geometry.Rings) > 0 {
		n = len(g.Geometry.Rings[0]) - 1
	}
	s := "Polygon, " + plural(n, "corner", "corners")
	if h := len(g.Geometry.Rings) - 1; h > 0 {
		s += ", " + plural(h, "hole", "holes")
	}
	return s
}

// fenceShape is a geofence as the map script draws it: [lat, lon] pairs.
type fenceShape struct {
	ID      string         `json:"id"`
	Name    string         `json:"name"`
	Center  *[2]float64    `json:"center,omitempty"`
	RadiusM float64        `json:"radius_m,omitempty"`
	Rings   [][][2]float64 `json:"rings,omitempty"`
}

func shapeOf(g fleet.Geofence) fenceShape {
	s := fenceShape{ID: g.ID, Name: g.Name}
	if g.Geometry.Type == fleet.GeometryPoint {
		if len(g.Geometry.Point) >= 2 {
			s.Center = &[2]float64{g.Geometry.Point[1], g.Geometry.Point[0]}
		}
		if g.RadiusM != nil {
			s.RadiusM = *g.RadiusM
		}
		return s
	}
	for _, ring := range g.Geometry.Rings {
		var r [][2]float64
		for _, p := range ring {
			if len(p) >= 2 {
				r = append(r, [2]float64{p[1], p[0]})
			}
		}
		s.Rings = append(s.Rings, r)
	}
	return s
}

type fencesData struct {
	Rows    []fenceRow
	More    bool
	Limit   int
	Form    fenceForm
	Shapes  []fenceShape
	Editing string // the geofence the form changes ("" to add one)
	Tiles   string
	Attrib  string
	CanEdit bool
}

// may reports whether the person may call the use case: their role's
// permissions against fleet's table, so that the pages offer only the
// changes the use cases would accept.
func may(us fleet.UserSession, useCase string) bool {
	perm, ok := fleet.PermissionOf(useCase)
	return ok && us.Principal().Require(perm) == nil
}

// geofencesPage lists the account's geofences on a map and in a table;
// the form adds one.
func (h *Handler) geofencesPage(w http.ResponseWriter, r *http.Request, us fleet.UserSession) {
	p := page{Title: "Geofences", Nav: "geofences", User: &us}
	h.takeNoticeInto(r, &p)
	h.showGeofences(w, r, us, http.StatusOK, p, fenceForm{Shape: shapeCircle})
}

// takeNoticeInto sets the page's notice from its ?notice= token.
func (h *Handler) takeNoticeInto(r *http.Request, p *page) {
	if v, ok := h.takeNotice(r); ok {
		if s, ok := v.(string); ok {
			p.Notice = s
		}
	}
}

func (h *Handler) showGeofences(w http.ResponseWriter, r *http.Request, us fleet.UserSession, status int, p page, form fenceForm) {
	ctx := r.Context()
	pr := us.Principal()
	fences, more, err := walk(ctx, maxListed, func(q fleet.ListQuery) (fleet.List[fleet.Geofence], error) {
		return h.svc.ListGeofences(ctx, pr, q)
	})
	if err != nil {
		h.fail(w, r, &us, err)
		return
	}
	watching, err := h.rulesByFence(ctx, pr)
	if err != nil {
		h.fail(w, r, &us, err)
		return
	}
	d := fencesData{More: more, Limit: us.Account.Plan.Limits().Geofences, Form: form.withErrors(&p), Shapes: []fenceShape{},
		Tiles: h.opts.MapTiles, Attrib: h.opts.MapAttribution, CanEdit: may(us, "CreateGeofence")}
	for _, g := range fences {
		d.Rows = append(d.Rows, fenceRow{Geofence: g, Shape: shapeWords(g), Rules: len(watching[g.ID])})
		d.Shapes = append(d.Shapes, shapeOf(g))
	}
	p.Data = d
	h.render(w, status, "geofences", p)
}

// rulesByFence reads the account's rules by the geofence they watch.
func (h *Handler) rulesByFence(ctx context.Context, pr fleet.Principal) (map[string][]fleet.AlertRule, error) {
	rules, _, err := walk(ctx, maxListed, func(q fleet.ListQuery) (fleet.List[fleet.AlertRule], error) {
		return h.svc.ListAlertRules(ctx, pr, fleet.AlertRuleFilter{}, q)
	})
	out := map[string][]fleet.AlertRule{}
	for _, r := range rules {
		if r.GeofenceID != "" {
			out[r.GeofenceID] = append(out[r.GeofenceID], r)
		}
	}
	return out, err
}

// fenceRules are the rules that watch geofence id, in words.
func (h *Handler) fenceRules(ctx context.Context, pr fleet.Principal, id string) ([]alertRuleRow, error) {
	watching, err := h.rulesByFence(ctx, pr)
	if err != nil {
		return nil, err
	}
	return h.ruleRows(ctx, pr, watching[id])
}

// addGeofence adds a geofence with the CreateGeofence use case.
func (h *Handler) addGeofence(w http.ResponseWriter, r *http.Request, us fleet.UserSession) {
	f := readFenceForm(r)
	g, bad := f.geofence()
	var err error
	if len(bad) > 0 {
		err = formError(bad, f.judged(g))
	} else {
		g, err = h.svc.CreateGeofence(r.Context(), us.Principal(), g)
	}
	if err != nil {
		p := page{Title: "Geofences", Nav: "geofences", User: &us}
		errorPage(&p, err)
		h.showGeofences(w, r, us, statusOf(err), p, f)
		return
	}
	http.Redirect(w, r, "/geofences?notice="+h.noticeOnce(r, g.Name+" is added.")+"#geofence-"+g.ID, http.StatusSeeOther)
}

// formError is a validation_error naming the form's fields that could not
// be read, and then the mistakes the domain finds in the rest (more's
// details on fields not named already), so that every mistake is said at
// once.
func formError(bad []fleet.FieldError, more error) error {
	var v fleet.Validator
	named := map[string]bool{}
	for _, fe := range bad {
		v.Add(fe.Field, "%s", fe.Message)
		named[fe.Field] = true
	}
	var fe *fleet.Error
	if errors.As(more, &fe) {
		for _, d := range fe.Details {
			if !named[d.Field] {
				v.Add(d.Field, "%s", d.Message)
			}
		}
	}
	return v.Err()
}

// geofencePage shows one geofence on the map with the form that changes it.
func (h *Handler) geofencePage(w http.ResponseWriter, r *http.Request, us fleet.UserSession) {
	g, err := h.svc.Geofence(r.Context(), us.Principal(), r.PathValue("geofence_id"))
	if err != nil {
		h.fail(w, r, &us, err)
		return
	}
	p := page{Title: g.Name, Nav: "geofences", User: &us}
	h.takeNoticeInto(r, &p)
	h.showGeofence(w, r, us, http.StatusOK, p, g, fenceFormOf(g))
}

type fenceData struct {
	fencesData
	Geofence fleet.Geofence
	Shape    string
	Rules    []alertRuleRow
}

func (h *Handler) showGeofence(w http.ResponseWriter, r *http.Request, us fleet.UserSession, status int, p page, g fleet.Geofence, form fenceForm) {
	rows, err := h.fenceRules(r.Context(), us.Principal(), g.ID)
	if err != nil {
		h.fail(w, r, &us, err)
		return
	}
	d := fenceData{Geofence: g, Shape: shapeWords(g), Rules: rows, fencesData: fencesData{Form: form.withErrors(&p), Editing: g.ID,
		Shapes: []fenceShape{shapeOf(g)}, Tiles: h.opts.MapTiles, Attrib: h.opts.MapAttribution, CanEdit: may(us, "UpdateGeofence")}}
	p.Data = d
	h.render(w, status, "geofence", p)
}

// saveGeofence changes a geofence with the UpdateGeofence use case.
func (h *Handler) saveGeofence(w http.ResponseWriter, r *http.Request, us fleet.UserSession) {
	ctx := r.Context()
	old, err := h.svc.Geofence(ctx, us.Principal(), r.PathValue("geofence_id"))
	if err != nil {
		h.fail(w, r, &us, err)
		return
	}
	f := readFenceForm(r)
	if f.Shape == shapePolygon && old.Geometry.Type == fleet.GeometryPolygon && len(old.Geometry.Rings) > 1 {
		f.Holes = old.Geometry.Rings[1:]
	}
	g, bad := f.geofence()
	if len(bad) > 0 {
		err = formError(bad, f.judged(g))
	} else {
		g, err = h.svc.UpdateGeofence(ctx, us.Principal(), old.ID, f.patch(g))
	}
	if err != nil {
		p := page{Title: old.Name, Nav: "geofences", User: &us}
		errorPage(&p, err)
		h.showGeofence(w, r, us, statusOf(err), p, old, f)
		return
	}
	http.Redirect(w, r, "/geofences/"+url.PathEscape(g.ID)+"?notice="+h.noticeOnce(r, g.Name+" is saved."), http.StatusSeeOther)
}

// deleteGeofencePage asks to confirm a geofence's deletion, naming it;
// while rules watch it, it names them instead and offers no deletion.
func (h *Handler) deleteGeofencePage(w http.ResponseWriter, r *http.Request, us fleet.UserSession) {
	ctx := r.Context()
	if !may(us, "DeleteGeofence") {
		h.fail(w, r, &us, fleet.Errorf(fleet.CodeInsufficientPermissions, "Your role cannot delete geofences."))
		return
	}
	g, err := h.svc.Geofence(ctx, us.Principal(), r.PathValue("geofence_id"))
	if err != nil {
		h.fail(w, r, &us, err)
		return
	}
	rows, err := h.fenceRules(ctx, us.Principal(), g.ID)
	if err != nil {
		h.fail(w, r, &us, err)
		return
	}
	h.render(w, http.StatusOK, "deletegeofence", page{Title: "Delete a geofence", Nav: "geofences", User: &us,
		Data: fenceData{Geofence: g, Shape: shapeWords(g), Rules: rows}})
}

// deleteGeofence deletes a geofence with the DeleteGeofence use case.
func (h *Handler) deleteGeofence(w http.ResponseWriter, r *http.Request, us fleet.UserSession) {
	ctx := r.Context()
	g, err := h.svc.Geofence(ctx, us.Principal(), r.PathValue("geofence_id"))
	if err == nil {
		_, err = h.svc.DeleteGeofence(ctx, us.Principal(), g.ID)
	}
	if err != nil {
		h.fail(w, r, &us, err)
		return
	}
	http.Redirect(w, r, "/geofences?notice="+h.noticeOnce(r, g.Name+" is deleted."), http.StatusSeeOther)
}
