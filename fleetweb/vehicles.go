package fleetweb

import (
	"cmp"
	"html"
	"html/template"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
)

// The vehicles page lists the account's vehicles with search, status and
// tag filters, sorting by name, status or last report, and pages of 50 (100,
// 500, or all when asked). It reads the account's vehicles through
// ListVehicles (at most maxSortedVehicles, in the order they were added),
// and filters with fleet.VehicleFilter.Match, the rule the stores use, then
// sorts and cuts the page in memory: a store lists vehicles only in id
// order, and sorting a fleet of 10,000 this way costs a page a few
// milliseconds (BenchmarkVehiclesPage).

// maxSortedVehicles bounds how many of an account's vehicles the page
// reads, filters and sorts.
const maxSortedVehicles = 25_000

// vehiclesPerPage are the page sizes a person may choose; 0 is all.
var vehiclesPerPage = []int{50, 100, 500, 0}

// vehicleSort is an order the list can take: a column and a direction.
type vehicleSort struct {
	Key   string // name, status, last_report; "-" before it descends
	Label string
}

var vehicleSorts = []vehicleSort{
	{"name", "Name, A–Z"}, {"-name", "Name, Z–A"},
	{"status", "Moving first"}, {"-status", "Offline first"},
	{"-last_report", "Newest report"}, {"last_report", "Oldest report"},
}

// vehicleQuery is what a person asked the vehicles page for.
type vehicleQuery struct {
	Q, Tag string
	Status fleet.VehicleStatus
	Sort   string
	Per    int // 0: all
	Page   int // from 1
}

// readVehicleQuery reads the page's query, refusing what a person could not
// have meant: an unknown status or order, control characters.
func readVehicleQuery(q url.Values) (vehicleQuery, error) {
	vq := vehicleQuery{Q: strings.TrimSpace(q.Get("q")), Tag: q.Get("tag"), Status: fleet.VehicleStatus(q.Get("status")),
		Sort: q.Get("sort"), Per: vehiclesPerPage[0], Page: 1}
	var v fleet.Validator
	if err := fleet.CheckQueryText("q", vq.Q); err != nil {
		v.Add("q", "must be text without control characters")
	}
	if err := fleet.CheckQueryText("tag", vq.Tag); err != nil {
		v.Add("tag", "must be text without control characters")
	}
	v.Check(vq.Status == "" || vq.Status.Valid(), "status", "must be moving, idle, stopped or offline")
	if vq.Sort == "" {
		vq.Sort = "name"
	}
	v.Check(slices.ContainsFunc(vehicleSorts, func(s vehicleSort) bool { return s.Key == vq.Sort }), "sort", "must be one of the list's orders")
	switch per := q.Get("per"); per {
	case "":
	case "all":
		vq.Per = 0
	default:
		n, err := strconv.Atoi(per)
		v.Check(err == nil && slices.Contains(vehiclesPerPage, n) && n > 0, "per", "must be 50, 100, 500 or all")
		if err == nil && n > 0 {
			vq.Per = n
		}
	}
	if p := q.Get("page"); p != "" {
		n, err := strconv.Atoi(p)
		v.Check(err == nil && n >= 1, "page", "must be a page number")
		if err == nil && n >= 1 {
			vq.Page = n
		}
	}
	if err := badAddress(v.Err()); err != nil {
		return vehicleQuery{Sort: "name", Per: vehiclesPerPage[0], Page: 1}, err
	}
	return vq, nil
}

// joinAddress joins the refusals of a page's address (badAddress) into
// one, naming every bad parameter; nil when there is none.
func joinAddress(errs ...error) error {
	var details []fleet.FieldError
	for _, err := range errs {
		if fe, ok := err.(*fleet.Error); ok {
			details = append(details, fe.Details...)
		}
	}
	if len(details) == 0 {
		return nil
	}
	return badAddress(&fleet.Error{Code: fleet.CodeValidation, Details: details})
}

// badAddress turns the validation error of a page's query into the
// refusal of its address: invalid_request, naming each bad parameter as
// the page's form labels it.
func badAddress(err error) error {
	fe, ok := err.(*fleet.Error)
	if !ok {
		return err
	}
	return &fleet.Error{Code: fleet.CodeInvalidRequest, Message: "The page's address has a mistake, so the default is shown:", Details: fe.Details}
}

// values is the query as a page's address carries it, without its
// defaults.
func (vq vehicleQuery) values() url.Values {
	q := url.Values{}
	set := func(k, v string) {
		if v != "" {
			q.Set(k, v)
		}
	}
	set("q", vq.Q)
	set("status", string(vq.Status))
	set("tag", vq.Tag)
	if vq.Sort != "name" {
		q.Set("sort", vq.Sort)
	}
	switch {
	case vq.Per == 0:
		q.Set("per", "all")
	case vq.Per != vehiclesPerPage[0]:
		q.Set("per", strconv.Itoa(vq.Per))
	}
	if vq.Page > 1 {
		q.Set("page", strconv.Itoa(vq.Page))
	}
	return q
}

func (vq vehicleQuery) url() string {
	if q := vq.values().Encode(); q != "" {
		return "/vehicles?" + q
	}
	return "/vehicles"
}

// vehicleRow is a vehicle as the list shows it.
type vehicleRow struct {
	ID, Name, Plate string
	Status          fleet.VehicleStatus
	LastReport      string // in the person's time zone, "—" when none
	Ago             string // "5 min ago"
	Stale           bool   // the last report is older than StaleAfter
	Speed           string // "42 km/h", "—"
	Tags            []string
}

type statusOption struct {
	Status fleet.VehicleStatus
	Count  int
}

type vehiclesData struct {
	Query      vehicleQuery
	Rows       []vehicleRow
	RowsHTML   template.HTML // the rows as the table shows them (rowsHTML)
	Account    int           // the account's vehicles read
	Capped     bool          // the account has more than maxSortedVehicles
	Unknown    bool          // the page links to the unknown devices (an admin, Options.UnknownDevices)
	Matching   int           // those the search, tag and status keep
	First      int           // the page's first row, from 1
	Last       int
	Pages      int
	Statuses   []statusOption // counts among the search and tag
	Tags       []string       // every tag of the account's vehicles
	Sorts      []vehicleSort
	PerPages   []int
	Zone       string // the zone the times are in: "UTC", "Europe/Berlin"
	Filtered   bool   // a search, status or tag narrows the list
	PrevPage   string // addresses; "" where there is none
	NextPage   string
	FirstPage  string
	LastPage   string
	ShowAllURL string // all the matching vehicles on one page, when they are more than a page
}

// Column is how a column header sorts: its address and its aria-sort.
type column struct {
	URL, AriaSort string
}

// SortBy returns how the header of the column key ("name", "status",
// "last_report") sorts: by it, or the other way when it sorts already.
func (d vehiclesData) SortBy(key string) column {
	q := d.Query
	q.Page = 1
	c := column{AriaSort: "none"}
	switch q.Sort {
	case key:
		q.Sort, c.AriaSort = "-"+key, "ascending"
	case "-" + key:
		q.Sort, c.AriaSort = key, "descending"
	default:
		q.Sort = key
		if key == "last_report" {
			q.Sort = "-last_report" // the newest first, at first
		}
	}
	c.URL = q.url()
	return c
}

// vehiclesPage lists the account's vehicles, filtered, sorted and a page
// at a time.
func (h *Handler) vehiclesPage(w http.ResponseWriter, r *http.Request, us fleet.UserSession) {
	p := page{Title: "Vehicles", Nav: "vehicles", User: &us}
	if n, ok := h.takeNotice(r); ok {
		if s, ok := n.(string); ok {
			p.Notice = s
		}
	}
	vq, qerr := readVehicleQuery(r.URL.Query())
	loc, _, zerr := zoneOf(r)
	status := http.StatusOK
	if err := joinAddress(qerr, zerr); err != nil {
		errorPage(&p, err)
		status = statusOf(err)
	}
	d, err := h.vehicles(r, us, vq, loc)
	if err != nil {
		h.fail(w, r, &us, err)
		return
	}
	d.Unknown = h.opts.UnknownDevices && us.IsAdmin()
	p.Data = d
	h.render(w, status, "vehicles", p)
}

// vehicles reads, filters, sorts and pages the account's vehicles.
func (h *Handler) vehicles(r *http.Request, us fleet.UserSession, vq vehicleQuery, loc *time.Location) (vehiclesData, error) {
	ctx := r.Context()
	all, capped, err := walk(ctx, maxSortedVehicles, func(q fleet.ListQuery) (fleet.List[fleet.Vehicle], error) {
		return h.svc.ListVehicles(ctx, us.Principal(), fleet.VehicleFilter{}, q)
	})
	if err != nil {
		return vehiclesData{}, err
	}
	d := vehiclesData{Query: vq, Account: len(all), Capped: capped, Sorts: vehicleSorts, PerPages: vehiclesPerPage,
		Zone: loc.String(), Filtered: vq.Q != "" || vq.Tag != "" || vq.Status != ""}
	tags := map[string]bool{}
	counts := map[fleet.VehicleStatus]int{}
	search := fleet.VehicleFilter{Query: vq.Q, Tag: vq.Tag}
	byStatus := fleet.VehicleFilter{Status: vq.Status}
	kept := make([]*fleet.Vehicle, 0, len(all))
	for i := range all {
		v := &all[i]
		for _, t := range v.Tags {
			tags[t] = true
		}
		if !search.Match(v) {
			continue
		}
		counts[v.Status]++
		if byStatus.Match(v) {
			kept = append(kept, v)
		}
	}
	for t := range tags {
		d.Tags = append(d.Tags, t)
	}
	slices.SortFunc(d.Tags, naturalCompare)
	for _, st := range fleet.VehicleStatuses() {
		d.Statuses = append(d.Statuses, statusOption{st, counts[st]})
	}
	sortVehicles(kept, vq.Sort)

	d.Matching = len(kept)
	per := vq.Per
	if per == 0 {
		per = max(len(kept), 1)
	}
	d.Pages = max((len(kept)+per-1)/per, 1)
	d.Query.Page = min(vq.Page, d.Pages)
	from := (d.Query.Page - 1) * per
	to := min(from+per, len(kept))
	if from < to {
		d.First, d.Last = from+1, to
	}
	now := h.svc.Now()
	d.Rows = make([]vehicleRow, 0, to-from)
	for _, v := range kept[from:to] {
		row := vehicleRow{ID: v.ID, Name: v.Name, Plate: v.LicensePlate, Status: v.Status, LastReport: "—", Speed: "—", Tags: v.Tags}
		if v.LastLocation != nil {
			row.LastReport = localTime(v.LastLocation.Timestamp, loc)
			row.Ago = ago(v.LastLocation.Timestamp, now)
			row.Stale = v.Status != fleet.StatusOffline && stale(v.LastLocation.Timestamp, now)
		}
		if v.Speed != nil {
			row.Speed = speed(*v.Speed)
		}
		d.Rows = append(d.Rows, row)
	}
	d.RowsHTML = rowsHTML(d.Rows)
	at := func(n int) string {
		q := d.Query
		q.Page = n
		return q.url()
	}
	if d.Query.Page > 1 {
		d.FirstPage, d.PrevPage = at(1), at(d.Query.Page-1)
	}
	if d.Query.Page < d.Pages {
		d.NextPage, d.LastPage = at(d.Query.Page+1), at(d.Pages)
	}
	if vq.Per != 0 && len(kept) > vq.Per {
		q := d.Query
		q.Page, q.Per = 1, 0
		d.ShowAllURL = q.url()
	}
	return d, nil
}

// rowsHTML writes the rows of the vehicles table. It is the one part of
// the page written in Go rather than by the template: a page may hold
// every vehicle of a large fleet (per=all), and html/template spends most
// of such a page's time on its rows. Every value is escaped here as the
// template would escape it: text and attribute values with
// html.EscapeString (which escapes both quotes), a tag in an address with
// url.QueryEscape first. TestVehiclesListEscapesWhatClientsWrote checks
// it with names and tags written to attack.
func rowsHTML(rows []vehicleRow) template.HTML {
	var b strings.Builder
	b.Grow(len(rows) * 520)
	e := html.EscapeString
	for _, r := range rows {
		id := e(r.ID)
		b.WriteString(`<tr id="veh-` + id + `">` + "\n")
		b.WriteString(`      <td data-label="Name" class="title"><a href="/vehicles/` + id + `">` + e(r.Name) + `</a>`)
		if r.Plate != "" {
			b.WriteString(` <span class="pair">` + e(r.Plate) + `</span>`)
		}
		b.WriteString("</td>\n")
		st := e(string(r.Status))
		b.WriteString(`      <td data-label="Status"><span class="badge st-` + st + `">` + st + "</span>")
		if r.Stale {
			b.WriteString(` <span class="badge st-stale" title="The last report is ` + e(r.Ago) + `: the status is what it said.">stale</span>`)
		}
		b.WriteString("</td>\n")
		b.WriteString(`      <td data-label="Last report"><span>` + e(r.LastReport))
		if r.Ago != "" {
			b.WriteString(` <span class="hint nowrap">` + e(r.Ago) + `</span>`)
		}
		b.WriteString("</span></td>\n")
		b.WriteString(`      <td data-label="Speed">` + e(r.Speed) + "</td>\n")
		b.WriteString(`      <td data-label="Tags"><span>`)
		for _, t := range r.Tags {
			b.WriteString(`<a class="tag" href="/vehicles?tag=` + e(url.QueryEscape(t)) + `">` + e(t) + `</a> `)
		}
		if len(r.Tags) == 0 {
			b.WriteString("—")
		}
		b.WriteString("</span></td>\n    </tr>")
	}
	return template.HTML(b.String())
}

// speed writes a speed in km/h: "42 km/h".
func speed(kmh float64) string { return strconv.FormatFloat(kmh, 'f', 0, 64) + " km/h" }

// sortVehicles orders vehicles by the list's order key; ties go by name,
// then by when the vehicle was added. Vehicles that never reported come
// last in either direction of the last report.
func sortVehicles(vs []*fleet.Vehicle, key string) {
	desc := strings.HasPrefix(key, "-")
	col := strings.TrimPrefix(key, "-")
	rank := map[fleet.VehicleStatus]int{}
	for i, st := range fleet.VehicleStatuses() {
		rank[st] = i
	}
	slices.SortStableFunc(vs, func(a, b *fleet.Vehicle) int {
		var c int
		switch col {
		case "status":
			c = cmp.Compare(rank[a.Status], rank[b.Status])
		case "last_report":
			switch {
			case a.LastLocation == nil && b.LastLocation == nil:
			case a.LastLocation == nil:
				return 1
			case b.LastLocation == nil:
				return -1
			default:
				c = a.LastLocation.Timestamp.Compare(b.LastLocation.Timestamp)
			}
		default:
			c = naturalCompare(a.Name, b.Name)
		}
		if desc {
			c = -c
		}
		if c == 0 && col != "name" {
			c = naturalCompare(a.Name, b.Name)
		}
		if c == 0 {
			c = strings.Compare(a.ID, b.ID)
		}
		return c
	})
}

// naturalCompare orders names as a person does: without regard to case,
// and with runs of digits by their value, so that "Truck 2" comes before
// "Truck 10".
func naturalCompare(a, b string) int {
	for a != "" && b != "" {
		if isDigit(a[0]) && isDigit(b[0]) {
			da, db := digits(a), digits(b)
			na, nb := strings.TrimLeft(a[:da], "0"), strings.TrimLeft(b[:db], "0")
			if c := cmp.Compare(len(na), len(nb)); c != 0 {
				return c
			}
			if c := strings.Compare(na, nb); c != 0 {
				return c
			}
			a, b = a[da:], b[db:]
			continue
		}
		ca, cb := lower(a[0]), lower(b[0])
		if ca != cb {
			return cmp.Compare(ca, cb)
		}
		a, b = a[1:], b[1:]
	}
	return cmp.Compare(len(a), len(b))
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func digits(s string) int {
	n := 0
	for n < len(s) && isDigit(s[n]) {
		n++
	}
	return n
}

func lower(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}
