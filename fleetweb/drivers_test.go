package fleetweb_test

import (
	"context"
	"html"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/fleetweb"
	"github.com/matryer/is"
)

// drivers returns the account's drivers, oldest first.
func (e *env) drivers(t *testing.T, acc fleet.Account) []fleet.Driver {
	t.Helper()
	l, err := e.svc.ListDrivers(context.Background(), fleet.SystemPrincipal(acc), fleet.DriverFilter{}, fleet.ListQuery{Limit: 500})
	if err != nil {
		t.Fatal(err)
	}
	return l.Items
}

// follow GETs where a redirect leads.
func follow(t *testing.T, c *http.Client, base string, r resp) resp {
	t.Helper()
	if r.status != http.StatusSeeOther {
		t.Fatalf("want a redirect, got %d %s", r.status, r.body)
	}
	return do(t, c, "GET", base+r.header.Get("Location"), nil)
}

// An admin adds, changes and deletes drivers: each form redirects, a
// refused one comes back with the mistake beside its field and what was
// typed, and deleting asks first, naming the driver.
func TestAdminManagesDrivers(t *testing.T) {
	is := is.New(t)
	e := newEnv(t, fleetweb.Options{})
	c := e.signedIn(t, "admin@acme.test", adminPassword)
	base := e.srv.URL

	r := do(t, c, "GET", base+"/drivers", nil)
	is.Equal(r.status, http.StatusOK)
	is.True(strings.Contains(r.body, "No drivers yet"))
	is.True(strings.Contains(r.body, `id="add-driver"`))

	form := url.Values{"name": {"Ana Lima"}, "identifier": {"01A2B3C4D5E6F708"}, "phone": {"+351 912 345 678"},
		"email": {"ana@example.com"}, "license_number": {"L-1234"}, "license_expires_on": {"2029-03-31"}, "notes": {"Nights."}, "external_id": {"hr-17"}}
	r = follow(t, c, base, do(t, c, "POST", base+"/drivers", form))
	is.Equal(r.status, http.StatusOK)
	is.True(strings.Contains(r.body, "Ana Lima is added."))
	ds := e.drivers(t, e.accA)
	is.Equal(len(ds), 1)
	ana := ds[0]
	is.Equal(ana.Identifier, "01A2B3C4D5E6F708")
	is.Equal(ana.LicenseExpiresOn, "2029-03-31")
	is.True(strings.Contains(r.body, `href="/drivers/`+ana.ID+`"`))
	// Reloading the page after the redirect adds nothing and says nothing.
	r = do(t, c, "GET", base+"/drivers", nil)
	is.True(!strings.Contains(r.body, "is added"))
	is.Equal(len(e.drivers(t, e.accA)), 1)

	// Mistakes: beside each field, in words, with what was typed kept.
	r = do(t, c, "POST", base+"/drivers", url.Values{"name": {" "}, "identifier": {"01 A2"}, "email": {"ana at example"}, "phone": {"+49 30 5555"}})
	is.Equal(r.status, http.StatusUnprocessableEntity)
	body := html.UnescapeString(r.body)
	is.True(strings.Contains(body, `<p id="name-error" class="field-error">Name is required, 1 to 100 characters.</p>`))
	is.True(strings.Contains(body, `id="identifier-error" class="field-error">Driver key must be 1 to 64 printable ASCII characters`))
	is.True(strings.Contains(body, `id="email-error" class="field-error">E-mail address must be an e-mail address`))
	is.True(strings.Contains(body, `value="01 A2"`) && strings.Contains(body, `value="ana at example"`) && strings.Contains(body, `value="+49 30 5555"`))
	is.True(strings.Contains(r.body, `aria-invalid="true" aria-describedby="name-error"`))
	is.True(!strings.Contains(body, `id="phone-error"`)) // the phone was fine
	is.Equal(len(e.drivers(t, e.accA)), 1)               // nothing stored
	// A key another driver has, in another case.
	r = do(t, c, "POST", base+"/drivers", url.Values{"name": {"Bo Berg"}, "identifier": {"01a2b3c4d5e6f708"}})
	is.Equal(r.status, http.StatusConflict)
	body = html.UnescapeString(r.body)
	is.True(strings.Contains(body, `id="identifier-error" class="field-error">Driver key is taken by another driver.</p>`))
	is.True(strings.Contains(body, "Another driver of this account, Ana Lima, has the identifier"))
	is.True(strings.Contains(body, `value="Bo Berg"`))

	// The driver's page: changed, an emptied field cleared.
	r = do(t, c, "GET", base+"/drivers/"+ana.ID, nil)
	is.Equal(r.status, http.StatusOK)
	is.True(strings.Contains(r.body, `id="edit-driver"`))
	edit := url.Values{"name": {"Ana Lima"}, "identifier": {"01A2B3C4D5E6F708"}, "phone": {""}, "email": {"ana@example.com"},
		"license_number": {"L-1234"}, "license_expires_on": {"2029-03-31"}, "notes": {"Days now."}, "external_id": {"hr-17"}}
	r = follow(t, c, base, do(t, c, "POST", base+"/drivers/"+ana.ID, edit))
	is.True(strings.Contains(r.body, "Ana Lima is saved."))
	got, err := e.svc.Driver(context.Background(), fleet.SystemPrincipal(e.accA), ana.ID)
	is.NoErr(err)
	is.Equal(got.Phone, "")
	is.Equal(got.Notes, "Days now.")
	edit.Set("license_expires_on", "2029-02-30")
	r = do(t, c, "POST", base+"/drivers/"+ana.ID, edit)
	is.Equal(r.status, http.StatusUnprocessableEntity)
	is.True(strings.Contains(html.UnescapeString(r.body), `id="license_expires_on-error" class="field-error">Licence expiry date must be a date, YYYY-MM-DD.</p>`))
	is.True(strings.Contains(r.body, `value="2029-02-30"`))

	// Assigned on the vehicle's page, shown there and on the driver's.
	v, err := e.svc.CreateVehicle(context.Background(), fleet.SystemPrincipal(e.accA), fleet.Vehicle{Name: "Truck 7"})
	is.NoErr(err)
	r = do(t, c, "GET", base+"/vehicles/"+v.ID, nil)
	is.True(strings.Contains(r.body, "Driver: <strong>none</strong>"))
	r = follow(t, c, base, do(t, c, "POST", base+"/vehicles/"+v.ID+"/driver", url.Values{"driver_id": {ana.ID}}))
	is.True(strings.Contains(r.body, "Ana Lima drives this vehicle now."))
	is.True(strings.Contains(r.body, `Driver: <strong><a href="/drivers/`+ana.ID+`">Ana Lima</a></strong>`))
	r = do(t, c, "GET", base+"/drivers", nil)
	is.True(strings.Contains(r.body, `<a href="/vehicles/`+v.ID+`">Truck 7</a>`))

	// Deleted after a question that names her and her vehicle.
	r = do(t, c, "GET", base+"/drivers/"+ana.ID+"/delete", nil)
	is.Equal(r.status, http.StatusOK)
	is.True(strings.Contains(r.body, "Delete the driver <strong>Ana Lima</strong>"))
	is.True(strings.Contains(r.body, "Truck 7 will have no driver."))
	r = follow(t, c, base, do(t, c, "POST", base+"/drivers/"+ana.ID+"/delete", url.Values{}))
	is.True(strings.Contains(r.body, "Ana Lima is deleted."))
	is.Equal(len(e.drivers(t, e.accA)), 0)
	v, _ = e.svc.Vehicle(context.Background(), fleet.SystemPrincipal(e.accA), v.ID)
	is.Equal(v.DriverID, "")
}

// The list's search finds by name, key or phone, in any case.
func TestDriversSearch(t *testing.T) {
	is := is.New(t)
	e := newEnv(t, fleetweb.Options{})
	p := fleet.SystemPrincipal(e.accA)
	for _, d := range []fleet.Driver{{Name: "Ana Lima", Identifier: "KEY-1"}, {Name: "Bo Berg", Phone: "+49 30 999"}, {Name: "Cy Lima"}} {
		_, err := e.svc.CreateDriver(context.Background(), p, d)
		is.NoErr(err)
	}
	c := e.signedIn(t, "viewer@acme.test", viewerPassword)
	for q, want := range map[string][]string{"lima": {"Ana Lima", "Cy Lima"}, "key-1": {"Ana Lima"}, "999": {"Bo Berg"}, "nobody": nil} {
		r := do(t, c, "GET", e.srv.URL+"/drivers?q="+url.QueryEscape(q), nil)
		is.Equal(r.status, http.StatusOK)
		for _, name := range []string{"Ana Lima", "Bo Berg", "Cy Lima"} {
			is.Equal(strings.Contains(r.body, ">"+name+"</a>"), slices.Contains(want, name)) // listed exactly when found
		}
		if want == nil {
			is.True(strings.Contains(r.body, "No drivers match"))
		} else {
			is.True(strings.Contains(r.body, "of 3 in the account"))
		}
	}
	r := do(t, c, "GET", e.srv.URL+"/drivers?q=%00", nil)
	is.Equal(r.status, http.StatusBadRequest) // a control character: said so, never a 500
}

// A viewer sees the drivers and changes nothing, whatever they post; an
// admin of another account reaches none of them.
func TestDriversViewerAndOtherAccount(t *testing.T) {
	is := is.New(t)
	e := newEnv(t, fleetweb.Options{})
	ctx := context.Background()
	p := fleet.SystemPrincipal(e.accA)
	ana, err := e.svc.CreateDriver(ctx, p, fleet.Driver{Name: "Ana Lima"})
	is.NoErr(err)
	v, err := e.svc.CreateVehicle(ctx, p, fleet.Vehicle{Name: "Truck 7"})
	is.NoErr(err)

	c := e.signedIn(t, "viewer@acme.test", viewerPassword)
	r := do(t, c, "GET", e.srv.URL+"/drivers", nil)
	is.Equal(r.status, http.StatusOK)
	is.True(strings.Contains(r.body, "Ana Lima"))
	for _, never := range []string{`id="add-driver"`, "Delete…", ">Edit<"} {
		is.True(!strings.Contains(r.body, never))
	}
	r = do(t, c, "GET", e.srv.URL+"/drivers/"+ana.ID, nil)
	is.Equal(r.status, http.StatusOK)
	is.True(!strings.Contains(r.body, `id="edit-driver"`))
	r = do(t, c, "GET", e.srv.URL+"/vehicles/"+v.ID, nil)
	is.True(!strings.Contains(r.body, `action="/vehicles/`+v.ID+`/driver"`))
	for _, post := range []struct {
		path string
		form url.Values
	}{
		{"/drivers", url.Values{"name": {"Forged"}}},
		{"/drivers/" + ana.ID, url.Values{"name": {"Renamed"}}},
		{"/drivers/" + ana.ID + "/delete", url.Values{}},
		{"/vehicles/" + v.ID + "/driver", url.Values{"driver_id": {ana.ID}}},
	} {
		r := do(t, c, "POST", e.srv.URL+post.path, post.form)
		is.Equal(r.status, http.StatusForbidden)
		is.True(strings.Contains(r.body, "Your role is viewer"))
	}
	is.Equal(do(t, c, "GET", e.srv.URL+"/drivers/"+ana.ID+"/delete", nil).status, http.StatusForbidden)
	ds := e.drivers(t, e.accA)
	is.Equal(len(ds), 1)
	is.Equal(ds[0].Name, "Ana Lima")
	v, _ = e.svc.Vehicle(ctx, p, v.ID)
	is.Equal(v.DriverID, "")

	other := e.signedIn(t, "admin@bravo.test", otherPassword)
	r = do(t, other, "GET", e.srv.URL+"/drivers", nil)
	is.True(!strings.Contains(r.body, "Ana Lima"))
	for _, path := range []string{"/drivers/" + ana.ID, "/drivers/" + ana.ID + "/delete"} {
		is.Equal(do(t, other, "GET", e.srv.URL+path, nil).status, http.StatusNotFound)
	}
	is.Equal(do(t, other, "POST", e.srv.URL+"/drivers/"+ana.ID, url.Values{"name": {"Stolen"}}).status, http.StatusNotFound)
	is.Equal(do(t, other, "POST", e.srv.URL+"/drivers/"+ana.ID+"/delete", url.Values{}).status, http.StatusNotFound)
	is.Equal(do(t, other, "POST", e.srv.URL+"/vehicles/"+v.ID+"/driver", url.Values{"driver_id": {""}}).status, http.StatusNotFound)
	is.Equal(len(e.drivers(t, e.accA)), 1)
	// A post from another site is refused before any handler.
	r = do(t, c, "POST", e.srv.URL+"/drivers", url.Values{"name": {"Cross"}}, "Sec-Fetch-Site", "cross-site")
	is.Equal(r.status, http.StatusForbidden)
}
