package fleethttp

// What the tests of package fleethttp_test read of the document's
// examples (openapi_examples.go).
var (
	ExampleTime = exampleTime
	// ExampleIDs are the ids the examples use, by the name of the member
	// (and path parameter) that holds them.
	ExampleIDs = map[string]string{
		"key_id": exKey, "vehicle_id": exVehicle, "work_order_id": exWorkOrder, "schedule_id": exSchedule,
		"alert_id": exAlert, "rule_id": exRule, "geofence_id": exGeofence, "webhook_id": exWebhook,
		"event_id": exEvent, "delivery_id": exDelivery, "trip_id": exTrip, "device_id": exDevice, "account_id": exAccount,
		"driver_id": exDriver, "notification_rule_id": exNtfRule, "report_schedule_id": exReport, "user_id": exUser,
		"command_id": exCommand,
	}
	// ExampleWebhookURL is the endpoint the webhook examples name.
	ExampleWebhookURL = exWebhookURL
)
