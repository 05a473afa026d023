package fleet

import (
	"slices"
)

// useCases is what each use case of the Service (named as its method) needs
// of the principal's key: the one place the product's permissions are
// stated. The Service checks it at the top of each use case, so a program
// that embeds the service gets the same rules as the API; the HTTP adapter's
// route table names the use case each route calls, and its OpenAPI document,
// its permission matrix and the dashboard's roles read the permission here.
// "" means any valid key may call it.
var useCases = map[string]Permission{
	"Account": "",

	"ListKeys":  PermKeysRead,
	"Key":       PermKeysRead,
	"KeyUsage":  PermKeysRead,
	"CreateKey": PermKeysWrite,
	"RevokeKey": PermKeysWrite,
	"RotateKey": PermKeysWrite,

	"ListVehicles":  PermVehiclesRead,
	"Vehicle":       PermVehiclesRead,
	"CreateVehicle": PermVehiclesWrite,
	"UpdateVehicle": PermVehiclesWrite,
	"DeleteVehicle": PermVehiclesWrite,

	// Share links show one vehicle on a public page.
	"ListShareLinks":  PermVehiclesRead,
	"ShareLink":       PermVehiclesRead,
	"CreateShareLink": PermVehiclesWrite,
	"RevokeShareLink": PermVehiclesWrite,

	"ListLocations":   PermLocationsRead,
	"ListHistory":     PermLocationsRead,
	"HistoryJSON":     PermLocationsRead,
	"Subscribe":       PermLocationsRead,
	"IngestLocations": PermLocationsWrite,
	"IngestBulk":      PermLocationsWrite,

	// A browser's EventSource opens the live stream with a stream token.
	"CreateStreamToken": PermLocationsRead,
	"ListTrips":         PermLocationsRead,
	"Trip":              PermLocationsRead,
	"TripPoints":        PermLocationsRead,
	"ListStops":         PermLocationsRead,
	"Summary":           PermLocationsRead,

	"ListWorkOrders":  PermMaintenanceRead,
	"WorkOrder":       PermMaintenanceRead,
	"CreateWorkOrder": PermMaintenanceWrite,
	"UpdateWorkOrder": PermMaintenanceWrite,
	"ListSchedules":   PermMaintenanceRead,
	"Schedule":        PermMaintenanceRead,
	"CreateSchedule":  PermMaintenanceWrite,
	"UpdateSchedule":  PermMaintenanceWrite,
	"DeleteSchedule":  PermMaintenanceWrite,

	"ListAlerts":       PermAlertsRead,
	"Alert":            PermAlertsRead,
	"CreateAlert":      PermAlertsWrite,
	"AcknowledgeAlert": PermAlertsWrite,
	// The dashboard's "Acknowledge selected"; the API has no such route.
	"AcknowledgeAlerts": PermAlertsWrite,
	"ResolveAlert":      PermAlertsWrite,
	"ListAlertRules":    PermAlertsRead,
	"AlertRule":         PermAlertsRead,
	"CreateAlertRule":   PermAlertsWrite,
	"UpdateAlertRule":   PermAlertsWrite,
	"DeleteAlertRule":   PermAlertsWrite,
	"ListGeofences":     PermAlertsRead,
	"Geofence":          PermAlertsRead,
	"CreateGeofence":    PermAlertsWrite,
	"UpdateGeofence":    PermAlertsWrite,
	"DeleteGeofence":    PermAlertsWrite,

	"ListEvents": PermEventsRead,
	"Event":      PermEventsRead,

	"ListWebhooks":        PermWebhooksRead,
	"Webhook":             PermWebhooksRead,
	"CreateWebhook":       PermWebhooksWrite,
	"UpdateWebhook":       PermWebhooksWrite,
	"DeleteWebhook":       PermWebhooksWrite,
	"RotateWebhookSecret": PermWebhooksWrite,
	"TestWebhook":         PermWebhooksWrite,
	"ListDeliveries":      PermWebhooksRead,
	"RetryDelivery":       PermWebhooksWrite,

	"ListDevices":  PermDevicesRead,
	"Device":       PermDevicesRead,
	"CreateDevice": PermDevicesWrite,
	"UpdateDevice": PermDevicesWrite,
	"DeleteDevice": PermDevicesWrite,

	// Commands to devices: reading them is reading devices; sending and
	// cancelling take a permission of their own.
	"ListCommands":  PermDevicesRead,
	"Command":       PermDevicesRead,
	"CreateCommand": PermDevicesCommand,
	"CancelCommand": PermDevicesCommand,

	"ListPeople":             PermNotificationsRead,
	"ListNotificationRules":  PermNotificationsRead,
	"NotificationRule":       PermNotificationsRead,
	"CreateNotificationRule": PermNotificationsWrite,
	"UpdateNotificationRule": PermNotificationsWrite,
	"DeleteNotificationRule": PermNotificationsWrite,
	"ListReportSchedules":    PermNotificationsRead,
	"ReportSchedule":         PermNotificationsRead,
	"CreateReportSchedule":   PermNotificationsWrite,
	"UpdateReportSchedule":   PermNotificationsWrite,
	"DeleteReportSchedule":   PermNotificationsWrite,
	"ListDrivers":            PermDriversRead,
	"Driver":                 PermDriversRead,
	"CreateDriver":           PermDriversWrite,
	"UpdateDriver":           PermDriversWrite,
	"DeleteDriver":           PermDriversWrite,
	"AssignDriver":           PermDriversWrite,
	// The summary by driver is a summary of the trips, as Summary is.
	"DriverSummary": PermLocationsRead,
}

// PermissionOf returns the permission a use case of the Service needs ("" when
// any valid key may call it), and whether the Service has such a use case.
func PermissionOf(useCase string) (Permission, bool) {
	p, ok := useCases[useCase]
	return p, ok
}

// UseCases lists the use cases a principal calls, by name.
func UseCases() []string {
	out := make([]string, 0, len(useCases))
	for n := range useCases {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// allow returns insufficient_permissions unless the principal may call the
// use case.
func (p Principal) allow(useCase string) error {
	perm, ok := useCases[useCase]
	if !ok {
		panic("fleet: no use case " + useCase) // a use case missing from the table
	}
	if perm == "" {
		return nil
	}
	return p.Require(perm)
}
