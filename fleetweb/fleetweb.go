// Package fleetweb is the dashboard: server-rendered pages where the people
// of an account sign in, make, rotate and revoke API keys, watch each key's
// usage, manage their people, find their vehicles and each one's day of
// trips and stops, run the fleet (add, change, delete and import vehicles,
// register their trackers and phones, open work orders and service
// schedules, make reports of trips, stops and summaries as tables and CSV),
// manage their drivers and who drives which vehicle, work
// through alerts, manage webhook endpoints, follow the fleet on a live map
// and share a vehicle's live location with a link; and the public page such
// a link opens, with no sign-in (share.go). Geofences are drawn on a map or
// typed (geofences.go), alert rules of every type are set with their
// fields (rules.go), and a vehicle's day is replayed on the map from a
// compact encoding of its reports (replay.go).
//
// It is an adapter beside fleethttp over the same fleet.Service (it takes
// only fleethttp's table of error code to HTTP status, so a page fails with
// the status the API would): every change goes through the Service's use cases
// with the signed-in person's principal (fleet.UserSession.Principal), so
// the dashboard obeys the same caps, permissions and rules as the API. Pages
// are html/template, assets are embedded (no CDN, no build step): the map is
// Leaflet, vendored under static/leaflet with its licence. Lists that grow
// (alerts, webhook deliveries) show the newest first, a page at a time,
// with how many there are. Below 800 px the header folds its pages into a
// menu, and below 640 px lists are cards.
//
// Every form that changes something is answered with a redirect
// (post/redirect/get), so that reloading a page or going back repeats
// nothing; a form the use case refuses is shown again with its errors (it
// changed nothing, so sending it again does no harm). A secret a form made (a new or rotated key, a sign-in link) waits
// for the page the redirect leads to in this process's memory, for the
// session that made it only, until that page is viewed or five minutes
// have passed: behind a load balancer, keep a person's requests on one
// server (sticky sessions), or the page says the secret was shown once.
//
// Security: the session cookie is __Host-fleet_session (Secure, HttpOnly,
// SameSite=Lax; fleet_session without Secure when Options.InsecureCookies
// is set, for plain http on loopback in development); a new session id is
// issued at every sign-in, so no id planted before it survives; every
// state-changing request passes net/http.CrossOriginProtection; pages carry
// a Content-Security-Policy that allows scripts, styles and connections to
// the dashboard's own origin only (and images from the map's tile server);
// after sign-in, next leads only to a path of the dashboard's own site; the
// links it shows take their address from Options.PublicURL when set, never
// from a request's Host. Wrap it in fleethttp.LimitBodyTime, as fleetserver
// does, so that a form that never arrives does not hold its connection.
//
// Mount it at "/" next to the API (as fleetserver does) or anywhere an
// embedding program likes: it serves absolute paths (/sign-in, /settings/...,
// /map, /static/...), so when mounted under a prefix, strip the prefix first.
package fleetweb

import (
	"bytes"
	"context"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/fleetwire"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// DefaultMapTiles is the map's tile URL template by default: OpenStreetMap's
// standard tiles (see their tile usage policy before heavy use).
const DefaultMapTiles = "https://tile.openstreetmap.org/{z}/{x}/{y}.png"

// Options configure the dashboard. The zero value is usable: no sign-up,
// Secure cookies, OpenStreetMap tiles.
type Options struct {
	// Signup opens /sign-up, where anyone may open a free account with its
	// first admin. Off by default.
	Signup bool
	// InsecureCookies names the session cookie fleet_session and drops its
	// Secure flag, so that a browser keeps it over plain http: for
	// development on a loopback address only. (A __Host- cookie must be
	// Secure.)
	InsecureCookies bool
	// MapTiles is the tile URL template of the live map ({z}, {x}, {y} and
	// optionally {s}); DefaultMapTiles when empty, "off" for no tiles (the
	// vehicle list still works).
	MapTiles string
	// MapAttribution is shown on the map; OpenStreetMap's by default.
	MapAttribution string
	// Logger receives the dashboard's errors; slog.Default when nil. No
	// password, session id, sign-in link or key secret is ever logged.
	Logger *slog.Logger
	// ClientAddr returns the client address that sign-in attempts are
	// throttled by; the host of the request's RemoteAddr when nil (set it
	// behind a trusted proxy).
	ClientAddr func(*http.Request) string
	// TrustedOrigins are origins ("https://fleet.example.com") whose
	// state-changing requests are accepted although they differ from the
	// request's Host: for a proxy that rewrites Host. Without them a form
	// posted through such a proxy is refused as cross-site. New panics on
	// a malformed origin.
	TrustedOrigins []string
	// PublicURL is the dashboard's address as people reach it
	// ("https://fleet.example.com"): the addresses the dashboard shows (a
	// new person's sign-in link, the API's address on the keys page) are
	// made from it. When empty they are made from the request's Host and
	// X-Forwarded-Proto, which a client chooses: set it wherever the
	// server can be reached under a name it does not control. New panics
	// on one that ParsePublicURL refuses.
	PublicURL string
	// MailNote, when set, says on the Notifications page that e-mail is
	// not sent ("no --smtp-url: rules are kept and nothing is sent").
	MailNote string
	// DeviceListeners returns the protocols the server listens on for
	// trackers and phone apps, with their ports: the devices' pages show
	// them, with the server's host (PublicURL's, or the request's), as
	// what to type into a tracker. Nil when the server runs no listener
	// (the pages then say so). It is called for each page, after the
	// listeners are bound (a port 0 is known by then).
	DeviceListeners func() []DeviceListener
	// UnknownDevices shows an account's admins, on /devices/unknown, the
	// server's record of devices that tried to reach it unregistered
	// (fleet.Operator.UnknownDevices), each with Register this…. The
	// record is the server's, every account's identifiers and addresses
	// together: turn it on only where one company runs the server.
	UnknownDevices bool
}

// ParsePublicURL checks a dashboard's public address (Options.PublicURL):
// an absolute http or https URL with a host, and no user, query or
// fragment; a path is kept (for a dashboard mounted under a prefix). It
// returns the URL without its trailing slash.
func ParsePublicURL(s string) (string, error) {
	u, err := url.Parse(s)
	switch {
	case err != nil || s == "" || unsafePathBytes(s):
		return "", fmt.Errorf("%q is not a URL", s)
	case u.Scheme != "http" && u.Scheme != "https":
		return "", fmt.Errorf("%q must be an absolute http or https URL (https://fleet.example.com)", s)
	case u.Host == "" || u.Opaque != "":
		return "", fmt.Errorf("%q has no host", s)
	case u.User != nil:
		return "", fmt.Errorf("%q must not carry a user", s)
	case u.RawQuery != "" || u.ForceQuery || u.Fragment != "" || strings.ContainsAny(s, "?#"):
		return "", fmt.Errorf("%q must not have a query or a fragment", s)
	}
	u.Scheme = strings.ToLower(u.Scheme)
	return strings.TrimRight(u.String(), "/"), nil
}

// Handler serves the dashboard. Create it with New.
type Handler struct {
	svc   *fleet.Service
	opts  Options
	log   *slog.Logger
	mux   *http.ServeMux
	root  http.Handler
	pages map[string]*template.Template
	csp   string
	once  *onceStore
}

// New returns the dashboard over svc.
func New(svc *fleet.Service, opts Options) *Handler {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.MapTiles == "" {
		opts.MapTiles = DefaultMapTiles
	}
	if opts.MapTiles == "off" {
		opts.MapTiles = ""
	}
	if opts.MapAttribution == "" {
		opts.MapAttribution = "© OpenStreetMap contributors"
	}
	if opts.PublicURL != "" {
		u, err := ParsePublicURL(opts.PublicURL)
		if err != nil {
			panic("fleetweb: Options.PublicURL: " + err.Error())
		}
		opts.PublicURL = u
	}
	if opts.ClientAddr == nil {
		opts.ClientAddr = func(r *http.Request) string {
			host, _, err := net.SplitHostPort(r.RemoteAddr)
			if err != nil {
				return r.RemoteAddr
			}
			return host
		}
	}
	h := &Handler{svc: svc, opts: opts, log: opts.Logger, mux: http.NewServeMux(), pages: map[string]*template.Template{}, once: newOnceStore()}
	h.csp = "default-src 'self'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:" +
		tileOrigin(opts.MapTiles) + "; frame-ancestors 'none'; base-uri 'none'; form-action 'self'; object-src 'none'"
	for _, name := range []string{"signin", "signup", "welcome", "password", "overview", "keys", "usage", "revoke", "users", "removeuser", "map", "alerts", "webhooks", "deletewebhook", "vehicles", "vehicle", "drivers", "driver", "deletedriver", "sharelinks", "commands", "notifications", "unsubscribe", "error", "vehicleform", "deletevehicle", "deviceform", "device", "deletedevice", "reports", "importvehicles", "maintenance", "unknowndevices", "registerdevice",
		"geofences", "geofence", "deletegeofence", "rules", "rule", "deleterule", "replay", "workorder", "schedule"} {
		files := []string{"templates/layout.html", "templates/" + name + ".html"}
		if name == "drivers" || name == "driver" {
			files = append(files, "templates/driverform.html") // the driver's form, shared
		}
		if name == "geofences" || name == "geofence" {
			files = append(files, "templates/fenceform.html") // the geofence's form, shared
		}
		if name == "rules" || name == "rule" {
			files = append(files, "templates/ruleform.html") // the rule's form, shared
		}
		if name == "maintenance" || name == "workorder" || name == "schedule" {
			files = append(files, "templates/maintenanceforms.html") // the work order's and the schedule's fields, shared
		}
		if name == "device" || name == "deviceform" || name == "registerdevice" {
			files = append(files, "templates/connect.html") // what to type into a tracker, shared
		}
		h.pages[name] = template.Must(template.New("").Funcs(funcs).ParseFS(templateFS, files...))
	}
	// A share link's public page is a layout of its own: no dashboard around it.
	h.pages["share"] = template.Must(template.New("").Funcs(funcs).ParseFS(templateFS, "templates/share.html"))
	static, _ := fs.Sub(staticFS, "static")
	files := http.FileServerFS(static)
	h.mux.Handle("GET /static/", http.StripPrefix("/static/", cacheStatic(files)))

	h.mux.HandleFunc("GET /sign-in", h.signInPage)
	h.mux.HandleFunc("GET /login", h.toSignIn)
	h.mux.HandleFunc("GET /signin", h.toSignIn)
	h.mux.HandleFunc("POST /sign-in", h.signIn)
	h.mux.HandleFunc("POST /sign-out", h.signOut)
	h.mux.HandleFunc("GET /sign-up", h.signUpPage)
	h.mux.HandleFunc("POST /sign-up", h.signUp)
	h.mux.HandleFunc("GET /welcome", h.welcomePage)
	h.mux.HandleFunc("POST /welcome", h.welcome)

	h.mux.HandleFunc("GET /{$}", h.auth(h.overview))
	h.mux.HandleFunc("GET /settings/password", h.auth(h.passwordPage))
	h.mux.HandleFunc("POST /settings/password", h.auth(h.changePassword))
	h.mux.HandleFunc("GET /settings/api-keys", h.auth(h.keysPage))
	h.mux.HandleFunc("POST /settings/api-keys", h.auth(h.createKey))
	h.mux.HandleFunc("GET /settings/api-keys/{key_id}", h.auth(h.usagePage))
	h.mux.HandleFunc("POST /settings/api-keys/{key_id}/rotate", h.auth(h.rotateKey))
	h.mux.HandleFunc("GET /settings/api-keys/{key_id}/revoke", h.auth(h.revokePage))
	h.mux.HandleFunc("POST /settings/api-keys/{key_id}/revoke", h.auth(h.revokeKey))
	h.mux.HandleFunc("GET /users", h.auth(h.usersPage))
	h.mux.HandleFunc("POST /users", h.auth(h.addUser))
	h.mux.HandleFunc("POST /users/{user_id}/role", h.auth(h.setRole))
	h.mux.HandleFunc("POST /users/{user_id}/link", h.auth(h.newLink))
	h.mux.HandleFunc("GET /users/{user_id}/remove", h.auth(h.removeUserPage))
	h.mux.HandleFunc("POST /users/{user_id}/remove", h.auth(h.removeUser))
	h.mux.HandleFunc("GET /vehicles", h.auth(h.vehiclesPage))
	h.mux.HandleFunc("GET /vehicles/{vehicle_id}", h.auth(h.vehiclePage))
	h.mux.HandleFunc("POST /vehicles/{vehicle_id}/driver", h.auth(h.assignDriver))
	h.mux.HandleFunc("GET /vehicles/new", h.auth(h.newVehiclePage))
	h.mux.HandleFunc("GET /vehicles/choices", h.auth(h.vehicleSearch))
	h.mux.HandleFunc("GET /vehicles/import", h.auth(h.importVehiclesPage))
	h.mux.HandleFunc("POST /vehicles/import", h.auth(h.importVehicles))
	h.mux.HandleFunc("POST /vehicles", h.auth(h.addVehicle))
	h.mux.HandleFunc("GET /vehicles/{vehicle_id}/edit", h.auth(h.editVehiclePage))
	h.mux.HandleFunc("POST /vehicles/{vehicle_id}/edit", h.auth(h.saveVehicle))
	h.mux.HandleFunc("GET /vehicles/{vehicle_id}/delete", h.auth(h.deleteVehiclePage))
	h.mux.HandleFunc("POST /vehicles/{vehicle_id}/delete", h.auth(h.deleteVehicle))
	h.mux.HandleFunc("GET /vehicles/{vehicle_id}/devices/new", h.auth(h.newDevicePage))
	h.mux.HandleFunc("POST /vehicles/{vehicle_id}/devices", h.auth(h.addDevice))
	h.mux.HandleFunc("GET /devices/unknown", h.auth(h.unknownDevicesPage))
	h.mux.HandleFunc("GET /devices/new", h.auth(h.registerDevicePage))
	h.mux.HandleFunc("POST /devices", h.auth(h.registerDevice))
	h.mux.HandleFunc("GET /devices/{device_id}", h.auth(h.devicePage))
	h.mux.HandleFunc("POST /devices/{device_id}", h.auth(h.saveDevice))
	h.mux.HandleFunc("GET /devices/{device_id}/delete", h.auth(h.deleteDevicePage))
	h.mux.HandleFunc("POST /devices/{device_id}/delete", h.auth(h.deleteDevice))
	h.mux.HandleFunc("GET /drivers", h.auth(h.driversPage))
	h.mux.HandleFunc("POST /drivers", h.auth(h.addDriver))
	h.mux.HandleFunc("GET /drivers/{driver_id}", h.auth(h.driverPage))
	h.mux.HandleFunc("POST /drivers/{driver_id}", h.auth(h.saveDriver))
	h.mux.HandleFunc("GET /drivers/{driver_id}/delete", h.auth(h.deleteDriverPage))
	h.mux.HandleFunc("POST /drivers/{driver_id}/delete", h.auth(h.deleteDriver))
	h.mux.HandleFunc("GET /reports", h.auth(h.reportsPage))
	h.mux.HandleFunc("GET /maintenance", h.auth(h.maintenancePage))
	h.mux.HandleFunc("POST /maintenance/work-orders", h.auth(h.addWorkOrder))
	h.mux.HandleFunc("GET /maintenance/work-orders/{work_order_id}", h.auth(h.workOrderPage))
	h.mux.HandleFunc("POST /maintenance/work-orders/{work_order_id}", h.auth(h.saveWorkOrder))
	h.mux.HandleFunc("POST /maintenance/work-orders/{work_order_id}/status", h.auth(h.moveWorkOrder))
	h.mux.HandleFunc("POST /maintenance/schedules", h.auth(h.addSchedule))
	h.mux.HandleFunc("GET /maintenance/schedules/{schedule_id}", h.auth(h.schedulePage))
	h.mux.HandleFunc("POST /maintenance/schedules/{schedule_id}", h.auth(h.saveSchedule))
	h.mux.HandleFunc("POST /maintenance/schedules/{schedule_id}/delete", h.auth(h.deleteSchedule))
	h.mux.HandleFunc("GET /alerts", h.auth(h.alertsPage))
	h.mux.HandleFunc("POST /alerts/acknowledge", h.auth(h.acknowledgeSelected))
	h.mux.HandleFunc("POST /alerts/{alert_id}/acknowledge", h.auth(h.moveAlert(fleet.AlertAcknowledged)))
	h.mux.HandleFunc("POST /alerts/{alert_id}/resolve", h.auth(h.moveAlert(fleet.AlertResolved)))
	h.mux.HandleFunc("GET /geofences", h.auth(h.geofencesPage))
	h.mux.HandleFunc("POST /geofences", h.auth(h.addGeofence))
	h.mux.HandleFunc("GET /geofences/{geofence_id}", h.auth(h.geofencePage))
	h.mux.HandleFunc("POST /geofences/{geofence_id}", h.auth(h.saveGeofence))
	h.mux.HandleFunc("GET /geofences/{geofence_id}/delete", h.auth(h.deleteGeofencePage))
	h.mux.HandleFunc("POST /geofences/{geofence_id}/delete", h.auth(h.deleteGeofence))
	h.mux.HandleFunc("GET /rules", h.auth(h.rulesPage))
	h.mux.HandleFunc("POST /rules", h.auth(h.addAlertRule))
	h.mux.HandleFunc("GET /rules/{rule_id}", h.auth(h.rulePage))
	h.mux.HandleFunc("POST /rules/{rule_id}", h.auth(h.saveAlertRule))
	h.mux.HandleFunc("POST /rules/{rule_id}/enable", h.auth(h.enableAlertRule(true)))
	h.mux.HandleFunc("POST /rules/{rule_id}/disable", h.auth(h.enableAlertRule(false)))
	h.mux.HandleFunc("GET /rules/{rule_id}/delete", h.auth(h.deleteAlertRulePage))
	h.mux.HandleFunc("POST /rules/{rule_id}/delete", h.auth(h.deleteAlertRule))
	h.mux.HandleFunc("GET /vehicles/{vehicle_id}/replay", h.auth(h.replayPage))
	h.mux.HandleFunc("GET /vehicles/{vehicle_id}/replay/data", h.auth(h.replayData))
	h.mux.HandleFunc("GET /webhooks", h.auth(h.webhooksPage))
	h.mux.HandleFunc("POST /webhooks", h.auth(h.addWebhook))
	h.mux.HandleFunc("POST /webhooks/{webhook_id}/test", h.auth(h.testWebhook))
	h.mux.HandleFunc("POST /webhooks/{webhook_id}/enable", h.auth(h.enableWebhook(true)))
	h.mux.HandleFunc("POST /webhooks/{webhook_id}/disable", h.auth(h.enableWebhook(false)))
	h.mux.HandleFunc("POST /webhooks/{webhook_id}/rotate-secret", h.auth(h.rotateWebhookSecret))
	h.mux.HandleFunc("GET /webhooks/{webhook_id}/delete", h.auth(h.deleteWebhookPage))
	h.mux.HandleFunc("POST /webhooks/{webhook_id}/delete", h.auth(h.deleteWebhook))
	h.mux.HandleFunc("GET /notifications", h.auth(h.notificationsPage))
	h.mux.HandleFunc("POST /notifications/rules", h.auth(h.addRule))
	h.mux.HandleFunc("POST /notifications/rules/{notification_rule_id}/enable", h.auth(h.setRule("enable")))
	h.mux.HandleFunc("POST /notifications/rules/{notification_rule_id}/disable", h.auth(h.setRule("disable")))
	h.mux.HandleFunc("POST /notifications/rules/{notification_rule_id}/delete", h.auth(h.setRule("delete")))
	h.mux.HandleFunc("POST /notifications/reports", h.auth(h.addReport))
	h.mux.HandleFunc("POST /notifications/reports/{report_schedule_id}/delete", h.auth(h.deleteReport))
	// One-click unsubscribe (RFC 8058): no session, the token is the proof.
	h.mux.HandleFunc("GET /unsubscribe/{token}", h.unsubscribePage)
	h.mux.HandleFunc("POST /unsubscribe/{token}", h.unsubscribe)
	h.mux.HandleFunc("GET /map", h.auth(h.mapPage))
	h.mux.HandleFunc("GET /map/events", h.mapEvents)
	h.mux.HandleFunc("GET /vehicles/{vehicle_id}/share", h.auth(h.shareLinksPage))
	h.mux.HandleFunc("POST /vehicles/{vehicle_id}/share", h.auth(h.createShareLink))
	h.mux.HandleFunc("POST /vehicles/{vehicle_id}/share/{share_link_id}/revoke", h.auth(h.revokeShareLink))
	// A vehicle's devices' commands (commands.go).
	h.mux.HandleFunc("GET /vehicles/{vehicle_id}/commands", h.auth(h.commandsPage))
	h.mux.HandleFunc("POST /vehicles/{vehicle_id}/commands", h.auth(h.sendCommand))
	h.mux.HandleFunc("POST /vehicles/{vehicle_id}/commands/{command_id}/cancel", h.auth(h.cancelCommand))
	// A share link's public page and its stream: no session (share.go).
	h.mux.HandleFunc("GET "+fleet.ShareLinkPath("{token}"), h.sharePage)
	h.mux.HandleFunc("GET "+fleet.ShareLinkPath("{token}")+"/events", h.shareEvents)
	h.mux.HandleFunc("/", h.notFound)

	// Every state-changing request must come from the dashboard's own
	// origin (Sec-Fetch-Site, or Origin against Host): a form posted from
	// another site is refused with 403 before any handler runs.
	cop := http.NewCrossOriginProtection()
	for _, o := range opts.TrustedOrigins {
		if err := cop.AddTrustedOrigin(o); err != nil {
			panic("fleetweb: Options.TrustedOrigins: " + err.Error())
		}
	}
	cop.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.renderError(w, r, http.StatusForbidden, "This request came from another site and was refused. Reload the page and try again.")
	}))
	h.root = cop.Handler(h.mux)
	return h
}

// tileOrigin returns " ORIGIN" of a tile URL template for the CSP's
// img-src, or "" when there is none.
func tileOrigin(tiles string) string {
	if tiles == "" {
		return ""
	}
	u, err := url.Parse(strings.ReplaceAll(tiles, "{s}", "SUB"))
	if err != nil || u.Host == "" {
		return ""
	}
	host := strings.ReplaceAll(u.Host, "SUB", "*")
	host = strings.NewReplacer("{", "", "}", "", ";", "", " ", "", "'", "").Replace(host)
	return " " + u.Scheme + "://" + host
}

func cacheStatic(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "public, max-age=3600")
		next.ServeHTTP(w, r)
	})
}

// ServeHTTP serves the dashboard.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	hd := w.Header()
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("Referrer-Policy", "same-origin")
	hd.Set("X-Frame-Options", "DENY")
	hd.Set("Content-Security-Policy", h.csp)
	hd.Set("Cache-Control", "no-store")
	if r.Method == http.MethodPost {
		// Every form of the dashboard is small: a body is read up to
		// MaxFormBytes, so that a burst of posts takes bounded memory. A
		// form that does not arrive (cut off by the server's body
		// deadline, say) is refused here: the request's context ends with
		// the connection's read, so no handler could do better than fail.
		r.Body = http.MaxBytesReader(w, r.Body, MaxFormBytes)
		if err := r.ParseForm(); err != nil {
			h.badForm(w, r, err)
			return
		}
	}
	h.root.ServeHTTP(w, r)
}

// MaxFormBytes is the most a form posted to the dashboard may hold; a
// larger one is refused with 413 (the sign-in form counts no attempt).
const MaxFormBytes = 64 << 10

// setRetryAfter sets Retry-After when err says when to try again (a
// throttled sign-in, a server too busy to check a password now).
func setRetryAfter(w http.ResponseWriter, err error) {
	if d, ok := fleet.RetryAfter(err); ok {
		w.Header().Set("Retry-After", strconv.Itoa(int((d+time.Second-1)/time.Second)))
	}
}

// CookieName returns the name of the session cookie under opts.
func CookieName(opts Options) string {
	if opts.InsecureCookies {
		return "fleet_session"
	}
	return "__Host-fleet_session"
}

func (h *Handler) setSessionCookie(w http.ResponseWriter, secret string) {
	http.SetCookie(w, &http.Cookie{Name: CookieName(h.opts), Value: secret, Path: "/",
		MaxAge: int(fleet.SessionMaxAge / time.Second), Secure: !h.opts.InsecureCookies, HttpOnly: true, SameSite: http.SameSiteLaxMode})
}

func (h *Handler) clearSessionCookie(w http.ResponseWriter) {
	http.SetCookie(w, &http.Cookie{Name: CookieName(h.opts), Value: "", Path: "/", MaxAge: -1,
		Secure: !h.opts.InsecureCookies, HttpOnly: true, SameSite: http.SameSiteLaxMode})
}

func (h *Handler) sessionSecret(r *http.Request) string {
	c, err := r.Cookie(CookieName(h.opts))
	if err != nil {
		return ""
	}
	return c.Value
}

// session returns the signed-in person, or an error (unauthorized when
// there is none).
func (h *Handler) session(r *http.Request) (fleet.UserSession, error) {
	secret := h.sessionSecret(r)
	if secret == "" {
		return fleet.UserSession{}, fleet.Errorf(fleet.CodeUnauthorized, "Please sign in.")
	}
	return h.svc.Session(r.Context(), secret)
}

type userFunc func(w http.ResponseWriter, r *http.Request, us fleet.UserSession)

// auth runs fn for a signed-in person; anyone else is sent to the sign-in
// page, which brings them back after.
func (h *Handler) auth(fn userFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		us, err := h.session(r)
		if err != nil {
			if fleet.ErrorCode(err) != fleet.CodeUnauthorized {
				h.fail(w, r, nil, err)
				return
			}
			if h.sessionSecret(r) != "" {
				h.clearSessionCookie(w)
			}
			next := "/"
			if r.Method == http.MethodGet {
				next = r.URL.RequestURI()
			}
			http.Redirect(w, r, "/sign-in?next="+url.QueryEscape(next), http.StatusSeeOther)
			return
		}
		fn(w, r, us)
	}
}

// page is what every template gets.
type page struct {
	Title  string
	Nav    string
	User   *fleet.UserSession
	Signup bool
	Notice string
	Error  string
	Fields []fleet.FieldError
	Data   any
}

func (h *Handler) render(w http.ResponseWriter, status int, name string, p page) {
	p.Signup = h.opts.Signup
	var buf bytes.Buffer
	if err := h.pages[name].ExecuteTemplate(&buf, "layout", p); err != nil {
		h.log.Error("dashboard: render page", "page", name, "err", err)
		http.Error(w, "The page could not be shown.", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	w.Write(buf.Bytes())
}

func (h *Handler) renderError(w http.ResponseWriter, r *http.Request, status int, msg string) {
	var u *fleet.UserSession
	if us, err := h.session(r); err == nil {
		u = &us
	}
	h.render(w, status, "error", page{Title: http.StatusText(status), User: u, Error: msg})
}

func (h *Handler) notFound(w http.ResponseWriter, r *http.Request) {
	h.renderError(w, r, http.StatusNotFound, "There is no such page.")
}

// statusOf is the HTTP status a page that failed with err is served with:
// the API's, from fleethttp's one table of code to status.
func statusOf(err error) int { return fleetwire.StatusOf(fleet.ErrorCode(err)) }

// errorPage sets the page's error from err: the domain's message (never
// internals) and its bad fields, which the page words as sentences about
// the form's fields (fieldSentence). A viewer's refused change gets a
// message about roles rather than about API keys.
func errorPage(p *page, err error) {
	p.Error = fleet.ErrorMessage(err)
	if fleet.ErrorCode(err) == fleet.CodeInsufficientPermissions && p.User != nil && !p.User.IsAdmin() {
		p.Error = roleRefusal(p.User.User.Role)
	}
	var fe *fleet.Error
	if errors.As(err, &fe) {
		p.Fields = fe.Details
	}
	if fleet.ErrorCode(err) == fleet.CodeValidation && len(p.Fields) > 0 {
		p.Error = "Please correct the form:"
	}
}

// roleRefusal says why a person's role refused a change.
func roleRefusal(r fleet.Role) string {
	if r == fleet.RoleManager {
		return "Your role is manager: you run the fleet, but people, API keys and webhooks are changed by an admin. Ask an admin of your account."
	}
	return "Your role is viewer: you can see everything but change nothing. Ask an admin of your account."
}

// fieldLabels are the labels of the form fields that the use cases name
// in their errors by the API's field names.
var fieldLabels = map[string]string{
	"name": "Name", "environment": "Environment", "expires_at": "Expires on", "expires": "Expires on",
	"permissions": "Permission", "email": "E-mail address", "password": "Password", "new_password": "New password",
	"current_password": "The current password you typed", "company_name": "Company name", "company": "Company name", "role": "Role",
	"grace_period_seconds": "Grace period", "token": "The sign-in link",
	"q": "Search", "tag": "Tag", "status": "Status", "sort": "Sort by", "per": "Per page", "page": "Page", "day": "Day", "tz": "Time zone",
	"url": "Endpoint URL", "events": "Events", "description": "Description", "alert_ids": "The selection", "duration": "How long",
	"identifier": "Driver key", "phone": "Phone", "license_number": "Licence number", "license_expires_on": "Licence expiry date",
	"notes": "Notes", "external_id": "External id", "driver_id": "Driver", "device_identifier": "Identifier", "vehicle_id": "Vehicle",
	"title": "Title", "priority": "Priority", "due_date": "Due on", "assigned_to": "Assigned to", "interval_days": "Every how many days",
	"interval_km": "Every how many km", "last_service_date": "Last service on", "last_service_odometer_km": "Odometer at the last service",
	"year": "Year", "vin": "VIN", "license_plate": "Licence plate", "make": "Make", "model": "Model", "tags": "Tags",
	"user_id": "Send to", "digest_minutes": "Digest window", "alert_types": "Alert types", "vehicle_ids": "Vehicles",
	"quiet_hours.tz": "Quiet hours' time zone", "quiet_hours.from": "Quiet hours' start", "quiet_hours.to": "Quiet hours' end",
	"threshold_kmh": "Speed limit", "after_minutes": "Silent for", "geofence_id": "Geofence", "severity": "Severity", "type": "Alert when",
	"idle_minutes": "Idle for", "alarms": "Alarms", "types": "Harsh events", "threshold_percent": "Drop", "threshold_l": "Litres",
	"threshold_g": "Speed change", "threshold_v": "Power back above", "outside_hours": "Working hours", "outside_hours.tz": "Working hours' time zone",
	"outside_hours.days": "Working days", "outside_hours.from": "Working hours' start", "outside_hours.to": "Working hours' end",
	"centre": "Centre", "corners": "Corners", "radius_m": "Radius", "shape": "Shape",
	"frequency": "How often", "weekday": "Day", "hour": "Hour", "report": "Report", "group_by": "Summary by",
	"cost_cents": "Cost", "currency": "Currency", "interval_engine_hours": "Every how many engine hours",
	"last_service_engine_hours": "Engine hours at the last service",
}

// fieldSentence words a field's error as a sentence about the form's
// field: "name" and "must be 1 to 100 characters" make "Name must be 1 to
// 100 characters."
func fieldSentence(f fleet.FieldError) string {
	field := f.Field
	if i := strings.IndexByte(field, '['); i > 0 { // permissions[2]
		field = field[:i]
	}
	label, ok := fieldLabels[field]
	if !ok {
		label = strings.ReplaceAll(field, "_", " ")
		if label != "" {
			label = strings.ToUpper(label[:1]) + label[1:]
		}
	}
	msg := strings.TrimSpace(f.Message)
	sep := ": "
	for _, verb := range []string{"must ", "is ", "are ", "cannot ", "has ", "does ", "should "} {
		if strings.HasPrefix(msg, verb) {
			sep = " "
		}
	}
	if !strings.HasSuffix(msg, ".") {
		msg += "."
	}
	return label + sep + msg
}

// num writes a whole number with thousands separators: 10,000.
func num(n int) string {
	s := strconv.Itoa(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// plural is "1 open alert" or "42 open alerts", the number with its
// thousands separators.
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return num(n) + " " + many
}

// fail shows an error page for err; errors of the store are logged.
func (h *Handler) fail(w http.ResponseWriter, r *http.Request, us *fleet.UserSession, err error) {
	status := statusOf(err)
	setRetryAfter(w, err)
	if status >= 500 {
		h.log.Error("dashboard", "path", r.URL.Path, "err", err)
	}
	p := page{Title: http.StatusText(status), User: us}
	errorPage(&p, err)
	h.render(w, status, "error", p)
}

// walk reads every page of a list, at most max items.
func walk[T any](ctx context.Context, max int, list func(fleet.ListQuery) (fleet.List[T], error)) ([]T, bool, error) {
	var out []T
	q := fleet.ListQuery{Limit: fleet.MaxPageLimit}
	for {
		l, err := list(q)
		if err != nil {
			return nil, false, err
		}
		out = append(out, l.Items...)
		if !l.HasMore {
			return out, false, nil
		}
		if len(out) >= max || ctx.Err() != nil {
			return out, true, ctx.Err()
		}
		q.Cursor = l.NextCursor
	}
}

// safeNext returns where to go after signing in: next when it is a path of
// this site, else /. A path of this site starts with a single /, has no
// scheme or host once parsed, and holds no byte at or below 0x20, no DEL
// and no backslash, as written or percent-decoded: a browser drops tabs
// and newlines from a Location and reads \ as /, so "/\t/other.example"
// or "/\\other.example" would lead to another site.
func safeNext(next string) string {
	if !sitePath(next) {
		return "/"
	}
	return next
}

func sitePath(s string) bool {
	if len(s) == 0 || s[0] != '/' || len(s) > 1 && s[1] == '/' || unsafePathBytes(s) {
		return false
	}
	u, err := url.Parse(s)
	if err != nil || u.Scheme != "" || u.Host != "" || u.User != nil || u.Opaque != "" {
		return false
	}
	return !strings.HasPrefix(u.Path, "//") && !unsafePathBytes(u.Path)
}

func unsafePathBytes(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c <= 0x20 || c == 0x7f || c == '\\' {
			return true
		}
	}
	return false
}

var funcs = template.FuncMap{
	"when": func(t any) string {
		switch v := t.(type) {
		case time.Time:
			if v.IsZero() {
				return "—"
			}
			return v.UTC().Format("2006-01-02 15:04 UTC")
		case *time.Time:
			if v == nil {
				return "—"
			}
			return v.UTC().Format("2006-01-02 15:04 UTC")
		}
		return fmt.Sprint(t)
	},
	"join":  func(ps []string) string { return strings.Join(ps, ", ") },
	"deref": func(f *float64) float64 { return *f },
	"clock": func(t *time.Time) string {
		if t == nil {
			return "—"
		}
		return t.UTC().Format("15:04:05")
	},
	"pct": func(n, of int) int {
		if of <= 0 {
			return 0
		}
		return min(100, n*100/of)
	},
	"num":           num,
	"plural":        plural,
	"fieldSentence": fieldSentence,
	"prefix":        func(k fleet.Key) string { return k.Prefix + "…" },
	"ms":            func(d *int64) string { return num(int(*d)) + " ms" },
	"words":         func(s any) string { return strings.ReplaceAll(fmt.Sprint(s), "_", " ") },
	"has":           func(list []string, v string) bool { return slices.Contains(list, v) },
}
