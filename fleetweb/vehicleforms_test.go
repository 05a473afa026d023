package fleetweb_test

import (
	"bytes"
	"context"
	"html"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/fleetweb"
	"github.com/fleetkit/fleetapi/internal/testclock"
	"github.com/matryer/is"
)

const managerPassword = "fleet-manager-runs-it-4"

// manager adds a manager to account A and signs them in.
func (e *env) manager(t *testing.T) *http.Client {
	t.Helper()
	if _, _, err := e.svc.Operator().CreateUser(context.Background(), e.accA.ID,
		fleet.UserParams{Email: "manager@acme.test", Role: fleet.RoleManager}, managerPassword); err != nil {
		t.Fatal(err)
	}
	return e.signedIn(t, "manager@acme.test", managerPassword)
}

// vehicles returns the account's vehicles, oldest first.
func (e *env) vehicles(t *testing.T, acc fleet.Account) []fleet.Vehicle {
	t.Helper()
	l, err := e.svc.ListVehicles(context.Background(), fleet.SystemPrincipal(acc), fleet.VehicleFilter{}, fleet.ListQuery{Limit: 500})
	if err != nil {
		t.Fatal(err)
	}
	return l.Items
}

// A manager adds, changes and deletes vehicles: each form redirects, a
// refused one comes back with each mistake beside its field and what was
// typed kept, nothing created; deleting asks first, naming the vehicle
// and its devices.
func TestVehicleForms(t *testing.T) {
	is := is.New(t)
	e := newEnv(t, fleetweb.Options{})
	c := e.manager(t)

	page := do(t, c, "GET", e.srv.URL+"/vehicles", nil)
	is.True(strings.Contains(page.body, `href="/vehicles/new">Add a vehicle</a>`))
	page = do(t, c, "GET", e.srv.URL+"/vehicles/new", nil)
	is.Equal(page.status, http.StatusOK)
	is.True(strings.Contains(page.body, `<label for="name">Name</label>`))

	// Bad input: each mistake beside its field, what was typed kept,
	// nothing created.
	for _, tc := range []struct {
		form       url.Values
		field, say string
	}{
		{url.Values{"name": {""}}, "name", "Name is required, 1 to 100 characters."},
		{url.Values{"name": {strings.Repeat("x", 101)}}, "name", "Name is required, 1 to 100 characters."},
		{url.Values{"name": {"Truck 7"}, "year": {"nineteen"}}, "year", "Year must be a whole number, such as 2021."},
		{url.Values{"name": {"Truck 7"}, "year": {"1800"}}, "year", "Year must be between 1900 and"},
		{url.Values{"name": {"Truck 7"}, "odometer_km": {"far"}}, "odometer_km", "Odometer km must be a number of kilometres"},
		{url.Values{"name": {"Truck 7"}, "vin": {"OOPS"}}, "vin", "VIN must be 17 characters"},
		{url.Values{"name": {"Truck 7"}, "tags": {"north, " + strings.Repeat("t", 80)}}, "tags", "Tags must be 1 to"},
	} {
		r := do(t, c, "POST", e.srv.URL+"/vehicles", tc.form)
		is.Equal(r.status, http.StatusUnprocessableEntity) // tc.say
		body := html.UnescapeString(r.body)
		i := strings.Index(body, `id="`+tc.field+`-error"`)
		is.True(i > 0) // the mistake beside its field
		is.True(strings.Contains(body[i:], tc.say))
		for _, typed := range tc.form {
			is.True(strings.Contains(body, `value="`+typed[0]+`"`)) // what was typed is kept
		}
	}
	is.Equal(len(e.vehicles(t, e.accA)), 0)

	// A name with markup is text, never markup.
	r := do(t, c, "POST", e.srv.URL+"/vehicles", url.Values{"name": {"<script>alert(1)</script> Truck"}, "license_plate": {"B-FL 7"},
		"year": {"2021"}, "tags": {"north, cold"}, "external_id": {"T-7"}, "odometer_km": {"120500.5"}})
	is.Equal(r.status, http.StatusSeeOther)
	vs := e.vehicles(t, e.accA)
	is.Equal(len(vs), 1)
	v := vs[0]
	is.Equal(r.header.Get("Location")[:len("/vehicles/"+v.ID)], "/vehicles/"+v.ID)
	is.Equal(*v.Year, 2021)
	is.Equal(v.Tags, []string{"north", "cold"})
	is.Equal(*v.OdometerKm, 120500.5)
	shown := follow(t, c, e.srv.URL, r)
	is.True(!strings.Contains(shown.body, "<script>alert(1)"))
	is.True(strings.Contains(shown.body, "&lt;script&gt;alert(1)&lt;/script&gt; Truck is added."))

	// The same external id again: the mistake beside the field.
	r = do(t, c, "POST", e.srv.URL+"/vehicles", url.Values{"name": {"Truck 8"}, "external_id": {"T-7"}})
	is.Equal(r.status, http.StatusConflict)
	is.True(strings.Contains(html.UnescapeString(r.body), `A vehicle with external_id "T-7" exists in this account.`))
	is.Equal(len(e.vehicles(t, e.accA)), 1)

	// Change it: an emptied field is cleared.
	edit := do(t, c, "GET", e.srv.URL+"/vehicles/"+v.ID+"/edit", nil)
	is.True(strings.Contains(edit.body, `value="B-FL 7"`))
	r = do(t, c, "POST", e.srv.URL+"/vehicles/"+v.ID+"/edit", url.Values{"name": {"Truck 7"}, "license_plate": {""}, "year": {"2022"}, "tags": {"north"}})
	is.Equal(r.status, http.StatusSeeOther)
	got, err := e.svc.Vehicle(context.Background(), fleet.SystemPrincipal(e.accA), v.ID)
	is.NoErr(err)
	is.Equal(got.Name, "Truck 7")
	is.Equal(got.LicensePlate, "")
	is.Equal(*got.Year, 2022)
	is.Equal(got.Tags, []string{"north"})
	r = do(t, c, "POST", e.srv.URL+"/vehicles/"+v.ID+"/edit", url.Values{"name": {" "}})
	is.Equal(r.status, http.StatusUnprocessableEntity)
	is.True(strings.Contains(r.body, `id="name-error"`))

	// Another account's vehicle is not found, and not changed.
	other := e.signedIn(t, "admin@bravo.test", otherPassword)
	is.Equal(do(t, other, "POST", e.srv.URL+"/vehicles/"+v.ID+"/edit", url.Values{"name": {"Mine"}}).status, http.StatusNotFound)
	is.Equal(do(t, other, "GET", e.srv.URL+"/vehicles/"+v.ID+"/delete", nil).status, http.StatusNotFound)
	is.Equal(do(t, other, "POST", e.srv.URL+"/vehicles/"+v.ID+"/delete", url.Values{}).status, http.StatusNotFound)
	is.Equal(len(e.vehicles(t, e.accA)), 1)

	// Delete it, after a question that names it and its device.
	_, err = e.svc.CreateDevice(context.Background(), fleet.SystemPrincipal(e.accA), fleet.Device{Identifier: "356307042441013", VehicleID: v.ID})
	is.NoErr(err)
	ask := do(t, c, "GET", e.srv.URL+"/vehicles/"+v.ID+"/delete", nil)
	is.Equal(ask.status, http.StatusOK)
	is.True(strings.Contains(ask.body, "Delete the vehicle <strong>Truck 7</strong>?"))
	is.True(strings.Contains(ask.body, "Its 1 device (<code>356307042441013</code>) will belong to no vehicle"))
	r = do(t, c, "POST", e.srv.URL+"/vehicles/"+v.ID+"/delete", url.Values{})
	is.Equal(r.status, http.StatusSeeOther)
	is.True(strings.Contains(follow(t, c, e.srv.URL, r).body, "Truck 7 is deleted"))
	is.Equal(len(e.vehicles(t, e.accA)), 0)
}

// A viewer is offered no control that changes a vehicle, and every change
// posted by hand is refused with nothing changed; a manager is refused
// what is an admin's: people, API keys and webhooks.
func TestRolesOfferAndRefuse(t *testing.T) {
	is := is.New(t)
	e := newEnv(t, fleetweb.Options{})
	ctx := context.Background()
	v, err := e.svc.CreateVehicle(ctx, fleet.SystemPrincipal(e.accA), fleet.Vehicle{Name: "Truck 1"})
	is.NoErr(err)
	viewer := e.signedIn(t, "viewer@acme.test", viewerPassword)
	for _, path := range []string{"/vehicles", "/vehicles/" + v.ID, "/drivers", "/alerts"} {
		body := do(t, viewer, "GET", e.srv.URL+path, nil).body
		is.Equal(strings.Count(body, `method="post"`), 1) // signing out, and no other form: path
		for _, word := range []string{"Add a vehicle", "Edit vehicle", "Delete vehicle", "Add driver", "Assign"} {
			is.True(!strings.Contains(body, ">"+word)) // path, word
		}
	}
	for _, path := range []string{"/vehicles/new", "/vehicles/" + v.ID + "/edit", "/vehicles/" + v.ID + "/delete"} {
		is.Equal(do(t, viewer, "GET", e.srv.URL+path, nil).status, http.StatusForbidden)
	}
	for _, post := range []struct {
		path string
		form url.Values
	}{
		{"/vehicles", url.Values{"name": {"Sneaky"}}},
		{"/vehicles/" + v.ID + "/edit", url.Values{"name": {"Sneaky"}}},
		{"/vehicles/" + v.ID + "/delete", url.Values{}},
	} {
		r := do(t, viewer, "POST", e.srv.URL+post.path, post.form)
		is.Equal(r.status, http.StatusForbidden)
		is.True(strings.Contains(r.body, "Your role is viewer"))
	}
	vs := e.vehicles(t, e.accA)
	is.Equal(len(vs), 1)
	is.Equal(vs[0].Name, "Truck 1")

	manager := e.manager(t)
	for _, post := range []struct {
		path string
		form url.Values
	}{
		{"/settings/api-keys", url.Values{"name": {"ci"}, "environment": {"development"}, "permissions": {"*"}}},
		{"/webhooks", url.Values{"url": {"https://hooks.example.com/fleet"}, "events": {"*"}}},
		{"/users", url.Values{"email": {"new@acme.test"}, "role": {"admin"}}},
	} {
		r := do(t, manager, "POST", e.srv.URL+post.path, post.form)
		is.Equal(r.status, http.StatusForbidden) // post.path
	}
	keys := do(t, manager, "GET", e.srv.URL+"/settings/api-keys", nil)
	is.Equal(keys.status, http.StatusOK) // a manager sees the keys
	is.True(!strings.Contains(keys.body, "Generate key"))
	// ...and runs the fleet.
	is.Equal(do(t, manager, "POST", e.srv.URL+"/vehicles/"+v.ID+"/edit", url.Values{"name": {"Truck 1b"}}).status, http.StatusSeeOther)
	r := do(t, manager, "POST", e.srv.URL+"/drivers", url.Values{"name": {"Ana Lima"}})
	is.Equal(r.status, http.StatusSeeOther)
}

// A status says how old its report is, and a report older than
// StaleAfter is marked stale wherever the status is shown, until the
// vehicle goes offline.
func TestStatusSaysHowOldItIs(t *testing.T) {
	is := is.New(t)
	clock := testclock.New(time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC))
	e := newEnvWith(t, fleet.Options{Now: clock.Now}, fleetweb.Options{MapTiles: "off"})
	ctx := context.Background()
	p := fleet.SystemPrincipal(e.accA)
	v, err := e.svc.CreateVehicle(ctx, p, fleet.Vehicle{Name: "Truck 7"})
	is.NoErr(err)
	sp := 42.0
	_, err = e.svc.IngestLocations(ctx, p, v.ID, []fleet.Point{{Latitude: 52.5, Longitude: 13.4, Timestamp: clock.Now(), Speed: &sp}})
	is.NoErr(err)
	c := e.signedIn(t, "viewer@acme.test", viewerPassword)

	list := do(t, c, "GET", e.srv.URL+"/vehicles", nil).body
	is.True(strings.Contains(list, "just now"))
	is.True(!strings.Contains(list, ">stale<"))

	clock.Advance(fleetweb.StaleAfter + time.Minute)
	list = do(t, c, "GET", e.srv.URL+"/vehicles", nil).body
	is.True(strings.Contains(list, `st-moving">moving</span> <span class="badge st-stale"`))
	is.True(strings.Contains(list, "6 min ago"))
	one := do(t, c, "GET", e.srv.URL+"/vehicles/"+v.ID, nil).body
	is.True(strings.Contains(one, "stale: as of 6 min ago"))
	is.True(strings.Contains(one, "42 km/h</strong> <span class=\"hint\">at the last report</span>"))
	// The live map's list gets each report's age, and marks it stale by
	// its script at StaleAfter.
	m := do(t, c, "GET", e.srv.URL+"/map", nil).body
	is.True(strings.Contains(m, `data-stale-after="300"`))
	is.True(strings.Contains(m, `"age_seconds":360`))
}

// Importing vehicles from CSV previews what would be created and each bad
// row with its reason, creates nothing until confirmed, and is idempotent
// on the external id: the same file again creates nothing.
func TestImportVehicles(t *testing.T) {
	is := is.New(t)
	e := newEnv(t, fleetweb.Options{})
	ctx := context.Background()
	_, err := e.svc.CreateVehicle(ctx, fleet.SystemPrincipal(e.accA), fleet.Vehicle{Name: "Old truck", ExternalID: "T-1"})
	is.NoErr(err)
	c := e.manager(t)
	is.Equal(do(t, c, "GET", e.srv.URL+"/vehicles/import", nil).status, http.StatusOK)

	bad := "name,license_plate,external_id,tags,year\n" +
		"Truck 7,B-FL 7,T-7,north;cold,2021\n" +
		",B-FL 8,T-8,,\n" +
		"Van 2,B-FL 22,T-7,,nineteen\n" +
		"<script>alert(1)</script>,,T-9,,\n"
	r := do(t, c, "POST", e.srv.URL+"/vehicles/import", url.Values{"csv": {bad}})
	is.Equal(r.status, http.StatusOK)
	body := html.UnescapeString(r.body)
	is.True(strings.Contains(body, "Preview: 2 vehicles to create, 0 existing, 2 bad rows"))
	is.True(strings.Contains(body, "Name is required, 1 to 100 characters."))
	is.True(strings.Contains(body, `External id "T-7" is on line 2 too.`))
	is.True(strings.Contains(body, "Year must be a whole number, such as 2021."))
	is.True(!strings.Contains(r.body, "<script>alert(1)"))
	is.True(!strings.Contains(body, "Import 2 vehicles")) // nothing to confirm while a row is bad
	// A confirmation posted by hand with bad rows creates nothing either.
	r = do(t, c, "POST", e.srv.URL+"/vehicles/import", url.Values{"csv": {bad}, "confirm": {"1"}})
	is.Equal(r.status, http.StatusOK)
	is.Equal(len(e.vehicles(t, e.accA)), 1)

	good := "name,license_plate,external_id,tags,year\n" +
		"Truck 7,B-FL 7,T-7,north;cold,2021\n" +
		"Old truck,,T-1,,\n" +
		"Van 2,B-FL 22,V-2,,2019\n"
	r = do(t, c, "POST", e.srv.URL+"/vehicles/import", url.Values{"csv": {good}})
	is.Equal(r.status, http.StatusOK)
	is.True(strings.Contains(r.body, "Preview: 2 vehicles to create, 1 existing, 0 bad rows"))
	is.True(strings.Contains(r.body, "exists already: skipped"))
	is.True(strings.Contains(r.body, ">Import 2 vehicles</button>"))
	is.Equal(len(e.vehicles(t, e.accA)), 1) // nothing until confirmed

	r = do(t, c, "POST", e.srv.URL+"/vehicles/import", url.Values{"csv": {good}, "confirm": {"1"}})
	is.Equal(r.status, http.StatusSeeOther)
	is.True(strings.Contains(follow(t, c, e.srv.URL, r).body, "2 vehicles are imported; 1 existed already."))
	vs := e.vehicles(t, e.accA)
	is.Equal(len(vs), 3)
	is.Equal(vs[1].Tags, []string{"north", "cold"})
	r = do(t, c, "POST", e.srv.URL+"/vehicles/import", url.Values{"csv": {good}, "confirm": {"1"}})
	is.True(strings.Contains(follow(t, c, e.srv.URL, r).body, "0 vehicles are imported; 3 existed already.")) // again: nothing twice
	is.Equal(len(e.vehicles(t, e.accA)), 3)

	for _, tc := range []struct{ csv, say string }{
		{"", "Choose a CSV file, or paste its text."},
		{"name,colour\nTruck,red\n", `The column "colour" is not one of`},
		{"license_plate\nB-1\n", "The CSV needs a name column."},
		{"name\n", "The CSV has a header but no vehicles."},
	} {
		r := do(t, c, "POST", e.srv.URL+"/vehicles/import", url.Values{"csv": {tc.csv}})
		is.Equal(r.status, http.StatusUnprocessableEntity)
		i := strings.Index(r.body, `id="csv-error"`)
		is.True(i > 0)
		is.True(strings.Contains(html.UnescapeString(r.body[i:]), tc.say))
	}
	// A viewer is refused.
	viewer := e.signedIn(t, "viewer@acme.test", viewerPassword)
	is.Equal(do(t, viewer, "POST", e.srv.URL+"/vehicles/import", url.Values{"csv": {good}, "confirm": {"1"}}).status, http.StatusForbidden)
	is.Equal(len(e.vehicles(t, e.accA)), 3)
}

// A CSV file chosen in the form (multipart) is read as pasted text is.
func TestImportVehiclesFromAFile(t *testing.T) {
	is := is.New(t)
	e := newEnv(t, fleetweb.Options{})
	c := e.signedIn(t, "admin@acme.test", adminPassword)
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	fw, err := mw.CreateFormFile("file", "fleet.csv")
	is.NoErr(err)
	fw.Write([]byte("name,external_id\nTruck 7,T-7\n"))
	is.NoErr(mw.Close())
	req, err := http.NewRequest("POST", e.srv.URL+"/vehicles/import", &body)
	is.NoErr(err)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	res, err := c.Do(req)
	is.NoErr(err)
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	is.Equal(res.StatusCode, http.StatusOK)
	is.True(strings.Contains(string(b), "Preview: 1 vehicle to create, 0 existing, 0 bad rows"))
	is.Equal(len(e.vehicles(t, e.accA)), 0)
}
