package fleethttp

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/fleetwire"
)

// The document's examples are Go values of the wire types, one per type,
// encoded as the server encodes its answers. The generator writes them into
// the component schemas, every request body and every success response;
// the tests (TestOpenAPIExamples, TestOpenAPIExampleRequestsAreAccepted) read
// the same values, check each against its schema, and send the request
// examples to a server, which must accept them. An example therefore cannot
// drift from what the server takes and answers, and a route whose types
// have no example here fails the generator.

// exampleTime is the moment the examples are set at: their timestamps are
// around it.
var exampleTime = time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)

// exampleID is an id of the examples: prefix, and 26 characters of the id
// alphabet that end in n.
func exampleID(prefix string, n int) string {
	return fmt.Sprintf("%s_06h03kq7mx2ra9b%011d", prefix, n)
}

// The ids of the examples: one of each kind.
var (
	exAccount   = exampleID(fleet.PrefixAccount, 1)
	exKey       = exampleID(fleet.PrefixKey, 2)
	exOldKey    = exampleID(fleet.PrefixKey, 3)
	exVehicle   = exampleID(fleet.PrefixVehicle, 4)
	exWorkOrder = exampleID(fleet.PrefixWorkOrder, 5)
	exSchedule  = exampleID(fleet.PrefixSchedule, 6)
	exAlert     = exampleID(fleet.PrefixAlert, 7)
	exRule      = exampleID(fleet.PrefixRule, 8)
	exGeofence  = exampleID(fleet.PrefixGeofence, 9)
	exWebhook   = exampleID(fleet.PrefixWebhook, 10)
	exEvent     = exampleID(fleet.PrefixEvent, 11)
	exDelivery  = exampleID(fleet.PrefixDelivery, 12)
	exTrip      = exampleID(fleet.PrefixTrip, 13)
	exDevice    = exampleID(fleet.PrefixDevice, 14)
	exDriver    = exampleID(fleet.PrefixDriver, 16)
	exShareLink = exampleID(fleet.PrefixShareLink, 17)
	exUser      = exampleID(fleet.PrefixUser, 18)
	exNtfRule   = exampleID(fleet.PrefixNotificationRule, 19)
	exReport    = exampleID(fleet.PrefixReportSchedule, 20)
	exCommand   = exampleID(fleet.PrefixCommand, 21)
)

// exWebhookURL is the endpoint of the webhook examples.
const exWebhookURL = "https://example.com/fleet/webhooks"

func ptr[T any](v T) *T { return &v }

// exampleAt is exampleTime moved by d.
func exampleAt(d time.Duration) time.Time { return exampleTime.Add(d) }

// exampleValues returns the example of each wire type the document shows,
// by type: request bodies, response data and the event payloads; and the
// response data of the operations whose answer differs from their type's
// example, by operation id. Each call makes new values.
func exampleValues() (map[reflect.Type]any, map[string]any) {
	created := exampleAt(-30 * 24 * time.Hour)
	day := 24 * time.Hour
	key := fleetwire.APIKey{KeyID: exKey, Name: "Gateway A", Prefix: "fleet_Ab12Cd",
		Permissions: []string{string(fleet.PermLocationsWrite)}, Environment: "production", Status: string(fleet.KeyActive),
		CreatedAt: exampleAt(-time.Hour), LastUsedAt: ptr(exampleAt(-time.Minute)), ExpiresAt: ptr(exampleAt(90 * day))}
	newKey := fleetwire.NewAPIKey{APIKey: key, Key: "fleet_Ab12Cd" + strings.Repeat("x7Qm", 8)[:fleet.SecretLen-len("fleet_Ab12Cd")]}
	rotated := newKey
	rotated.KeyID, rotated.CreatedAt, rotated.LastUsedAt = exampleID(fleet.PrefixKey, 15), exampleTime, nil
	old := key
	old.KeyID, old.ExpiresAt = exOldKey, ptr(exampleAt(10*time.Minute))
	rotated.PreviousKey = &old
	usage := fleetwire.KeyUsage{KeyID: exKey, Hours: []fleetwire.UsageHour{
		{Hour: exampleTime, Requests: 42, Rejected: 0},
		{Hour: exampleAt(-time.Hour), Requests: 1250, Rejected: 3},
	}}
	usage.Totals.Requests, usage.Totals.Rejected = 1292, 3

	berlin := fleet.Position{Latitude: 52.520008, Longitude: 13.404954, Timestamp: exampleAt(-time.Minute), Heading: ptr(92.0)}
	vehicle := fleet.Vehicle{ID: exVehicle, Name: "Truck 7", VIN: "1HGBH41JXMN109186", Make: "Volvo", Model: "FH16", Year: ptr(2024),
		LicensePlate: "B-FL 2024", ExternalID: "erp-7", Tags: []string{"north", "refrigerated"}, OdometerKm: ptr(9612.4),
		Status: fleet.StatusMoving, Speed: ptr(44.0), LastLocation: &berlin, Ignition: ptr(true), EngineHours: ptr(1523.4), FuelLevel: ptr(62.0),
		PowerV: ptr(13.8), TelemetryAt: ptr(berlin.Timestamp), CreatedAt: created, UpdatedAt: exampleAt(-day)}
	point := func(min int, lat, lon, speed float64) fleetwire.LocationInput {
		return fleetwire.LocationInput{Latitude: ptr(lat), Longitude: ptr(lon), Timestamp: ptr(exampleAt(time.Duration(min) * time.Minute)),
			Speed: ptr(speed), Heading: ptr(92.0), Attributes: fleet.Attributes{fleet.BoolAttr("ignition", true), fleet.NumberAttr("power_v", 13.8)}}
	}
	bulkPoint := point(-1, 52.520008, 13.404954, 44)
	bulkPoint.VehicleID = &exVehicle

	workOrder := fleet.WorkOrder{ID: exWorkOrder, VehicleID: exVehicle, Title: "Replace front brake pads", Description: "Pads at 3 mm.\nCheck the discs too.",
		Priority: fleet.PriorityHigh, Status: fleet.WorkOrderInProgress, DueDate: "2026-11-30", AssignedTo: "North depot",
		OdometerKm: ptr(9612.4), CostCents: ptr(int64(34900)), Currency: "EUR", ScheduleID: exSchedule,
		CreatedAt: exampleAt(-2 * day), UpdatedAt: exampleAt(-time.Hour)}
	schedule := fleet.Schedule{ID: exSchedule, VehicleID: exVehicle, Name: "Brake inspection", IntervalDays: ptr(180), IntervalKm: ptr(20000.0),
		LastServiceDate: "2026-06-01", LastServiceOdometerKm: ptr(0.0), AutoCreateWorkOrder: true,
		NextDueDate: "2026-11-28", NextDueOdometerKm: ptr(20000.0), Status: fleet.ScheduleDueSoon, CreatedAt: created, UpdatedAt: exampleAt(-2 * day)}
	alert := fleet.Alert{ID: exAlert, Type: fleet.AlertCustom, Severity: fleet.SeverityWarning, Status: fleet.AlertOpen, VehicleID: exVehicle,
		Message: "Driver reports a flat tyre", Data: json.RawMessage(`{"axle":2}`), CreatedAt: exampleAt(-5 * time.Minute)}
	rule := fleet.AlertRule{ID: exRule, Type: fleet.AlertSpeeding, Severity: fleet.SeverityCritical, ThresholdKmh: ptr(90.0),
		VehicleIDs: []string{exVehicle}, Enabled: true, CreatedAt: created, UpdatedAt: created}
	ring := [][][]float64{{{13.37, 52.50}, {13.44, 52.50}, {13.44, 52.54}, {13.37, 52.54}, {13.37, 52.50}}}
	polygon := fleet.Geometry{Type: fleet.GeometryPolygon, Rings: ring}
	geofence := fleet.Geofence{ID: exGeofence, Name: "Berlin centre", Geometry: polygon, CreatedAt: created, UpdatedAt: created}
	webhook := fleet.Webhook{ID: exWebhook, URL: exWebhookURL, Events: []string{fleet.EventVehicleStatusChanged, fleet.EventAlertCreated},
		Description: "Dispatch board", Enabled: true, CreatedAt: created}
	statusChange := fleet.StatusChange{VehicleID: exVehicle, From: fleet.StatusIdle, To: fleet.StatusMoving, At: exampleAt(-time.Minute)}
	statusData, _ := json.Marshal(statusChange)
	event := fleet.Event{ID: exEvent, Type: fleet.EventVehicleStatusChanged, CreatedAt: exampleAt(-time.Minute), Data: statusData}
	delivery := fleet.Delivery{ID: exDelivery, WebhookID: exWebhook, EventID: exEvent, Attempt: 1, Status: fleet.DeliverySucceeded,
		ResponseStatus: ptr(200), DurationMs: ptr(int64(84)), CreatedAt: exampleAt(-time.Minute)}
	trip := fleet.Trip{ID: exTrip, VehicleID: exVehicle, Status: fleet.TripCompleted,
		Start:      fleet.TripPlace{Latitude: 52.5311, Longitude: 13.3845, Timestamp: exampleAt(-90 * time.Minute)},
		End:        fleet.TripPlace{Latitude: 52.520008, Longitude: 13.404954, Timestamp: exampleAt(-62 * time.Minute)},
		DistanceKm: 14.213, DurationSeconds: 1680, MovingSeconds: 1500, MaxSpeed: 62, AvgSpeed: 34.11,
		StartOdometerKm: ptr(9584.1), EndOdometerKm: ptr(9598.3), Points: 85, IgnoredPoints: 1}
	detail := fleet.TripDetail{Trip: trip, Locations: []fleet.Point{
		{Latitude: 52.5311, Longitude: 13.3845, Timestamp: trip.Start.Timestamp, Speed: ptr(12.0), Heading: ptr(140.0)},
		{Latitude: 52.5302, Longitude: 13.3861, Timestamp: trip.Start.Timestamp.Add(20 * time.Second), Speed: ptr(31.0), Heading: ptr(138.0)},
	}, PointsPagination: &fleet.Pagination{NextCursor: ptr("eyJ0IjoiMjAyNi0xMS0yM1QwODozMDo0MFoifQ"), HasMore: true}}
	position := fleet.DevicePosition{Latitude: 52.520008, Longitude: 13.404954, Timestamp: exampleAt(-time.Minute), Speed: ptr(44.0),
		Heading: ptr(92.0), Altitude: ptr(38.0), Valid: true, Satellites: ptr(11), Attrs: fleet.Attributes{fleet.NumberAttr("battery", 12.7), fleet.BoolAttr("ignition", true)}}
	device := fleet.Device{ID: exDevice, Identifier: "356307042441013", VehicleID: exVehicle, Name: "FMB920 in Truck 7", Protocol: "teltonika",
		CreatedAt: created, UpdatedAt: created, LastSeenAt: ptr(exampleAt(-time.Minute)),
		LastReport: &fleet.LastReport{ReceivedAt: exampleAt(-time.Minute), Protocol: "teltonika", Position: position, Stored: true}}
	driver := fleet.Driver{ID: exDriver, Name: "Ana Lima", Identifier: "01A2B3C4D5E6F708", Phone: "+49 30 1234567",
		Email: "ana.lima@example.com", LicenseNumber: "B072RRE2I55", LicenseExpiresOn: "2029-03-31", ExternalID: "hr-1042",
		VehicleID: exVehicle, CreatedAt: created, UpdatedAt: created}
	summary := fleet.SummaryRow{VehicleID: exVehicle, Day: "2026-11-23", DistanceKm: 128.45, Trips: 6, DrivingSeconds: 14220, StoppedSeconds: 9840,
		MaxSpeed: 88, FirstDeparture: ptr(exampleAt(-3 * time.Hour)), LastArrival: ptr(exampleAt(-62 * time.Minute))}
	shareLink := fleetwire.ShareLink{ShareLinkID: exShareLink, VehicleID: exVehicle, Status: string(fleet.ShareLinkActive),
		ExpiresAt: exampleAt(8 * time.Hour), CreatedAt: exampleAt(-time.Minute)}
	mergePatch := func(s string) fleet.Optional[string] { return fleet.Some(s) }
	clear := fleet.Optional[string]{Set: true}

	values := []any{
		fleetwire.Account{AccountID: exAccount, CompanyName: "Acme Logistics", Plan: string(fleet.PlanPro), APIVersion: fleet.APIVersion,
			RateLimitPerHour: fleet.PlanPro.Limits().RequestsPerHour, CreatedAt: created},
		key, newKey, usage,
		fleetwire.CreateKeyRequest{Name: "Gateway A", Permissions: []string{string(fleet.PermLocationsWrite)}, Environment: "production",
			ExpiresAt: ptr(exampleAt(90 * day))},
		fleetwire.RotateKeyRequest{GracePeriodSeconds: ptr(int64(600))},
		fleetwire.StreamToken{Token: fleet.StreamTokenPrefix + strings.Repeat("4kQ9", 16)[:fleet.StreamTokenLen-len(fleet.StreamTokenPrefix)],
			ExpiresAt: exampleAt(fleet.StreamTokenTTL)},

		vehicle,
		fleetwire.VehicleInput{Name: "Truck 7", VIN: ptr("1HGBH41JXMN109186"), Make: ptr("Volvo"), Model: ptr("FH16"), Year: ptr(2024),
			LicensePlate: ptr("B-FL 2024"), ExternalID: ptr("erp-7"), Tags: []string{"north", "refrigerated"}, OdometerKm: ptr(9600.0)},
		fleet.VehiclePatch{Name: mergePatch("Truck 7 (north)"), LicensePlate: clear, Tags: fleet.Some([]string{"north"})},
		fleet.VehicleDeleted{VehicleID: exVehicle, Deleted: true},
		fleet.LocationRecord{VehicleID: exVehicle, Name: "Truck 7", Location: fleet.RecordPoint{Latitude: berlin.Latitude, Longitude: berlin.Longitude,
			Timestamp: berlin.Timestamp}, Status: fleet.StatusMoving, Speed: ptr(44.0), Heading: ptr(92.0)},
		fleetwire.LocationBatch{Locations: []fleetwire.LocationInput{point(-2, 52.5194, 13.4021, 38), point(-1, 52.520008, 13.404954, 44)}},
		bulkRequest{Locations: []fleetwire.LocationInput{bulkPoint}},
		fleet.Point{Latitude: berlin.Latitude, Longitude: berlin.Longitude, Timestamp: berlin.Timestamp, Speed: ptr(44.0), Heading: ptr(92.0),
			OdometerKm: ptr(9612.4), Attributes: fleet.Attributes{fleet.NumberAttr("fuel_level", 62), fleet.BoolAttr("ignition", true),
				fleet.NumberAttr("power_v", 13.8)}},
		fleet.IngestResult{Accepted: 2, Duplicates: 0},
		trip, detail,
		fleet.Stop{VehicleID: exVehicle, Start: exampleAt(-62 * time.Minute), End: ptr(exampleAt(-20 * time.Minute)), DurationSeconds: 2520,
			Location: fleet.StopLocation{Latitude: 52.520008, Longitude: 13.404954}},
		summary,

		workOrder,
		fleetwire.WorkOrderInput{VehicleID: exVehicle, Title: "Replace front brake pads", Description: ptr("Pads at 3 mm.\nCheck the discs too."),
			Priority: ptr(string(fleet.PriorityHigh)), DueDate: ptr("2026-11-30"), AssignedTo: ptr("North depot"), CostCents: ptr(int64(34900)), Currency: ptr("EUR")},
		fleet.WorkOrderPatch{Status: fleet.Some(fleet.WorkOrderInProgress), AssignedTo: mergePatch("North depot"), DueDate: clear},
		schedule,
		fleetwire.ScheduleInput{VehicleID: exVehicle, Name: "Brake inspection", IntervalDays: ptr(180), IntervalKm: ptr(20000.0),
			LastServiceDate: ptr("2026-06-01"), LastServiceOdometerKm: ptr(0.0), AutoCreateWorkOrder: ptr(true)},
		fleet.SchedulePatch{IntervalKm: fleet.Some(ptr(25000.0)), AutoCreateWorkOrder: fleet.Some(ptr(false))},
		fleet.ScheduleDeleted{ScheduleID: exSchedule, Deleted: true},

		alert,
		fleetwire.AlertInput{VehicleID: &exVehicle, Severity: ptr(string(fleet.SeverityWarning)), Message: "Driver reports a flat tyre",
			Data: fleetwire.JSONObject(`{"axle":2}`)},
		rule,
		fleetwire.AlertRuleInput{Type: string(fleet.AlertSpeeding), Severity: ptr(string(fleet.SeverityCritical)), ThresholdKmh: ptr(90.0),
			VehicleIDs: []string{exVehicle}},
		fleet.AlertRulePatch{ThresholdKmh: fleet.Some(ptr(100.0)), VehicleIDs: fleet.Optional[[]string]{Set: true}},
		fleet.RuleDeleted{RuleID: exRule, Deleted: true},
		geofence,
		fleetwire.GeofenceInput{Name: "Berlin centre", Geometry: &polygon},
		fleet.GeofencePatch{Name: mergePatch("Berlin Mitte")},
		fleet.GeofenceDeleted{GeofenceID: exGeofence, Deleted: true},

		event, statusChange,
		fleet.WorkOrderStatusChange{WorkOrderID: exWorkOrder, VehicleID: exVehicle, From: fleet.WorkOrderOpen, To: fleet.WorkOrderInProgress, At: exampleAt(-time.Hour)},
		fleet.WebhookTestData{WebhookID: exWebhook},
		webhook,
		fleet.WebhookWithSecret{Webhook: webhook, Secret: fleet.WebhookSecretPrefix + strings.Repeat("c2VjcmV0", 6)[:43] + "="},
		fleetwire.WebhookInput{URL: exWebhookURL, Events: []string{fleet.EventVehicleStatusChanged, fleet.EventAlertCreated},
			Description: ptr("Dispatch board")},
		fleet.WebhookPatch{Events: fleet.Some([]string{"*"}), Description: clear},
		fleet.WebhookDeleted{WebhookID: exWebhook, Deleted: true},
		delivery,
		fleet.WebhookTestSent{Event: fleet.Event{ID: exEvent, Type: fleet.EventWebhookTest, CreatedAt: exampleTime,
			Data: json.RawMessage(`{"webhook_id":"` + exWebhook + `"}`)},
			Delivery: fleet.Delivery{ID: exDelivery, WebhookID: exWebhook, EventID: exEvent,
				Attempt: 1, Status: fleet.DeliveryPending, NextAttemptAt: ptr(exampleTime), CreatedAt: exampleTime}},

		shareLink,
		fleetwire.NewShareLink{ShareLink: shareLink, URL: fleet.ShareLinkURL("https://fleet.example.com", "q3Vb9Xw2LmTz7RkYp4NcA8sD1fGhJ6uE0iOa5WeQxZw")},
		fleetwire.ShareLinkInput{VehicleID: exVehicle, ExpiresAt: ptr(exampleAt(8 * time.Hour))},

		device,
		fleetwire.DeviceInput{Identifier: "356307042441013", VehicleID: &exVehicle, Name: ptr("FMB920 in Truck 7")},
		fleet.DevicePatch{Name: mergePatch("FMB920 spare"), VehicleID: clear},
		fleet.DeviceDeleted{DeviceID: exDevice, Deleted: true},
		fleet.Command{ID: exCommand, DeviceID: exDevice, Type: fleet.CommandEngineStop, Status: fleet.CommandDelivered,
			Result: "DOUT1:1 DOUT2:0 DOUT3:0 DIN1:1", CreatedBy: exKey, ExpiresAt: exampleAt(23 * time.Hour), CreatedAt: exampleAt(-time.Hour),
			SentAt: ptr(exampleAt(-time.Hour)), DeliveredAt: ptr(exampleAt(-time.Hour + 2*time.Second))},
		fleetwire.CommandInput{Type: fleet.CommandEngineStop},

		driver,
		fleetwire.DriverInput{Name: "Ana Lima", Identifier: ptr("01A2B3C4D5E6F708"), Phone: ptr("+49 30 1234567"),
			Email: ptr("ana.lima@example.com"), LicenseNumber: ptr("B072RRE2I55"), LicenseExpiresOn: ptr("2029-03-31"), ExternalID: ptr("hr-1042")},
		fleet.DriverPatch{Phone: mergePatch("+49 30 7654321"), Notes: clear},
		fleet.DriverDeleted{DriverID: exDriver, Deleted: true},
		fleet.AssignTo(exDriver),
		fleet.VehicleDriver{VehicleID: exVehicle, DriverID: exDriver},
		fleet.DriverChange{VehicleID: exVehicle, To: &exDriver, Identifier: ptr("01A2B3C4D5E6F708"), At: exampleAt(-time.Minute)},

		fleet.IgnitionChange{VehicleID: exVehicle, At: exampleAt(-time.Minute), Location: fleet.EventLocation{Latitude: 52.520008, Longitude: 13.404954},
			DeviceID: ptr(exDevice)},
		fleet.DeviceAlarm{DeviceID: ptr(exDevice), VehicleID: exVehicle, Alarm: "power_cut", At: exampleAt(-time.Minute),
			Location: fleet.EventLocation{Latitude: 52.520008, Longitude: 13.404954}},
		fleet.FuelChange{VehicleID: exVehicle, From: 64, To: 41, Unit: fleet.FuelUnitPercent, At: exampleAt(-time.Minute),
			Location: fleet.EventLocation{Latitude: 52.520008, Longitude: 13.404954}},
		fleet.IdlingChange{VehicleID: exVehicle, At: exampleAt(-time.Minute), Minutes: 5.5},

		fleet.Person{UserID: exUser, Email: "ana.lima@example.com", Name: "Ana Lima", Role: fleet.RoleAdmin},
		fleet.NotificationRule{ID: exNtfRule, UserID: exUser, Events: []string{fleet.EventAlertCreated},
			AlertTypes: []fleet.AlertType{fleet.AlertSpeeding}, VehicleIDs: []string{}, Tags: []string{"north"}, Channel: fleet.ChannelEmail,
			QuietHours: &fleet.QuietHours{TZ: "Europe/Berlin", From: "22:00", To: "07:00"}, DigestMinutes: 5, Enabled: true, CreatedAt: created},
		fleet.QuietHours{TZ: "Europe/Berlin", From: "22:00", To: "07:00"},
		fleetwire.NotificationRuleInput{Email: ptr("ana.lima@example.com"), Events: []string{fleet.EventAlertCreated},
			AlertTypes: []fleet.AlertType{fleet.AlertSpeeding}, Tags: []string{"north"},
			QuietHours: &fleet.QuietHours{TZ: "Europe/Berlin", From: "22:00", To: "07:00"}, DigestMinutes: ptr(10)},
		fleet.NotificationRulePatch{DigestMinutes: fleet.Some(ptr(15)), QuietHours: fleet.Optional[*fleet.QuietHours]{Set: true}},
		fleet.NotificationRuleDeleted{NotificationRuleID: exNtfRule, Deleted: true},
		fleet.ReportSchedule{ID: exReport, UserID: exUser, Frequency: fleet.FrequencyWeekly, Weekday: "monday", Hour: 7, TZ: "Europe/Berlin",
			Report: fleet.ReportSummary, GroupBy: fleet.GroupByVehicle, VehicleIDs: []string{}, Tags: []string{"north"}, Enabled: true,
			CreatedAt: created, NextRunAt: time.Date(2026, 11, 30, 6, 0, 0, 0, time.UTC)},
		fleetwire.ReportScheduleInput{Email: ptr("ana.lima@example.com"), Frequency: fleet.FrequencyWeekly, Weekday: ptr("monday"),
			Hour: ptr(7), TZ: ptr("Europe/Berlin"), Report: fleet.ReportSummary, GroupBy: ptr(fleet.GroupByVehicle), Tags: []string{"north"}},
		fleet.ReportSchedulePatch{Hour: fleet.Some(ptr(8))},
		fleet.ReportScheduleDeleted{ReportScheduleID: exReport, Deleted: true},
		struct{}{},
	}
	out := make(map[reflect.Type]any, len(values))
	for _, v := range values {
		out[reflect.TypeOf(v)] = v
	}
	// A summary's row in the document is a row by vehicle or by driver
	// (summaryItem): the example is one by vehicle.
	out[reflect.TypeFor[summaryItem]()] = summary
	return out, map[string]any{
		"rotateApiKey": rotated, // the new key, and the old one in previous_key
	}
}

// examples holds the examples while the document is built, encoded.
type examples struct {
	byType map[reflect.Type]any
	byOp   map[string]any
	g      *generator
}

func newExamples(g *generator) *examples {
	byType, byOp := exampleValues()
	return &examples{byType: byType, byOp: byOp, g: g}
}

// of returns the JSON of the example of t (of a slice: a list of its
// element's example), and whether there is one.
func (ex *examples) of(t reflect.Type) (json.RawMessage, bool) {
	v, ok := ex.byType[t]
	if !ok && t.Kind() == reflect.Slice {
		e, ok := ex.byType[t.Elem()]
		if !ok {
			return nil, false
		}
		v = []any{e}
	} else if !ok {
		return nil, false
	}
	b, err := jsonMarshal(v)
	if err != nil {
		ex.g.fail("example of %s: %v", t, err)
		return nil, false
	}
	return b, true
}

// must is of for a type an operation needs an example of.
func (ex *examples) must(t reflect.Type, what string) json.RawMessage {
	b, ok := ex.of(t)
	if !ok {
		ex.g.fail("%s: no example of %s in exampleValues", what, t)
	}
	return b
}

// envelope is the example of the success answer of operation op, whose
// data is of type t.
func (ex *examples) envelope(op string, t reflect.Type, list bool) json.RawMessage {
	what := op + " response"
	var data json.RawMessage
	if v, ok := ex.byOp[op]; ok {
		var err error
		if data, err = jsonMarshal(v); err != nil {
			ex.g.fail("%s: %v", what, err)
		}
	} else {
		data = ex.must(t, what)
	}
	e := envelope{Success: true, Data: data}
	if list {
		e.Pagination = &pagination{NextCursor: ptr("eyJpZCI6InZlaF8wNmgwM2txN214MnJhOWIwMDAwMDAwMDA0In0"), HasMore: true}
	}
	b, err := jsonMarshal(e)
	if err != nil {
		ex.g.fail("%s: %v", what, err)
	}
	return b
}

// stream is the example of the live stream: one event, as writeEvent
// sends it.
func (ex *examples) stream() string {
	rec := ex.must(reflect.TypeFor[fleet.LocationRecord](), "the stream")
	return "id: 1042\nevent: location\ndata: " + string(rec) + "\n\n"
}
