package fleethttp

import "github.com/fleetkit/fleetapi/fleet"

// route is one endpoint of the API. perm is the permission the endpoint
// needs ("" for none); the service enforces it, and the route table states it
// so that tests can check every route.
type route struct {
	method  string
	pattern string
	perm    fleet.Permission
	maxBody int64 // 0: MaxBody
	serve   func(*call) error
}

// routeTable lists every route of the API: one glance shows it all.
func (h *Handler) routeTable() []route {
	return []route{
		{"GET", "/v1/account", "", 0, h.getAccount},

		{"GET", "/v1/api_keys", fleet.PermKeysRead, 0, h.listKeys},
		{"POST", "/v1/api_keys", fleet.PermKeysWrite, 0, h.createKey},
		{"GET", "/v1/api_keys/{key_id}", fleet.PermKeysRead, 0, h.getKey},
		{"DELETE", "/v1/api_keys/{key_id}", fleet.PermKeysWrite, 0, h.revokeKey},
		{"POST", "/v1/api_keys/{key_id}/rotate", fleet.PermKeysWrite, 0, h.rotateKey},
		{"GET", "/v1/api_keys/{key_id}/usage", fleet.PermKeysRead, 0, h.keyUsage},

		{"GET", "/v1/vehicles", fleet.PermVehiclesRead, 0, h.listVehicles},
		{"POST", "/v1/vehicles", fleet.PermVehiclesWrite, 0, h.createVehicle},
		{"GET", "/v1/vehicles/{vehicle_id}", fleet.PermVehiclesRead, 0, h.getVehicle},
		{"PATCH", "/v1/vehicles/{vehicle_id}", fleet.PermVehiclesWrite, 0, h.patchVehicle},
		{"DELETE", "/v1/vehicles/{vehicle_id}", fleet.PermVehiclesWrite, 0, h.deleteVehicle},

		{"GET", "/v1/vehicles/locations", fleet.PermLocationsRead, 0, h.snapshot},
		{"POST", "/v1/vehicles/locations", fleet.PermLocationsWrite, MaxBatchBody, h.ingestBulk},
		{"GET", "/v1/vehicles/locations/stream", fleet.PermLocationsRead, 0, h.stream},
		{"GET", "/v1/vehicles/{vehicle_id}/locations", fleet.PermLocationsRead, 0, h.history},
		{"POST", "/v1/vehicles/{vehicle_id}/locations", fleet.PermLocationsWrite, MaxBatchBody, h.ingestVehicle},

		{"GET", "/v1/maintenance/work_orders", fleet.PermMaintenanceRead, 0, h.listWorkOrders},
		{"POST", "/v1/maintenance/work_orders", fleet.PermMaintenanceWrite, 0, h.createWorkOrder},
		{"GET", "/v1/maintenance/work_orders/{work_order_id}", fleet.PermMaintenanceRead, 0, h.getWorkOrder},
		{"PATCH", "/v1/maintenance/work_orders/{work_order_id}", fleet.PermMaintenanceWrite, 0, h.patchWorkOrder},
		{"GET", "/v1/maintenance/schedules", fleet.PermMaintenanceRead, 0, h.listSchedules},
		{"POST", "/v1/maintenance/schedules", fleet.PermMaintenanceWrite, 0, h.createSchedule},
		{"GET", "/v1/maintenance/schedules/{schedule_id}", fleet.PermMaintenanceRead, 0, h.getSchedule},
		{"PATCH", "/v1/maintenance/schedules/{schedule_id}", fleet.PermMaintenanceWrite, 0, h.patchSchedule},
		{"DELETE", "/v1/maintenance/schedules/{schedule_id}", fleet.PermMaintenanceWrite, 0, h.deleteSchedule},

		{"GET", "/v1/alerts", fleet.PermAlertsRead, 0, h.listAlerts},
		{"POST", "/v1/alerts", fleet.PermAlertsWrite, 0, h.createAlert},
		{"GET", "/v1/alerts/{alert_id}", fleet.PermAlertsRead, 0, h.getAlert},
		{"POST", "/v1/alerts/{alert_id}/acknowledge", fleet.PermAlertsWrite, 0, h.acknowledgeAlert},
		{"POST", "/v1/alerts/{alert_id}/resolve", fleet.PermAlertsWrite, 0, h.resolveAlert},
		{"GET", "/v1/alerts/rules", fleet.PermAlertsRead, 0, h.listRules},
		{"POST", "/v1/alerts/rules", fleet.PermAlertsWrite, 0, h.createRule},
		{"GET", "/v1/alerts/rules/{rule_id}", fleet.PermAlertsRead, 0, h.getRule},
		{"PATCH", "/v1/alerts/rules/{rule_id}", fleet.PermAlertsWrite, 0, h.patchRule},
		{"DELETE", "/v1/alerts/rules/{rule_id}", fleet.PermAlertsWrite, 0, h.deleteRule},
		{"GET", "/v1/geofences", fleet.PermAlertsRead, 0, h.listGeofences},
		{"POST", "/v1/geofences", fleet.PermAlertsWrite, 0, h.createGeofence},
		{"GET", "/v1/geofences/{geofence_id}", fleet.PermAlertsRead, 0, h.getGeofence},
		{"PATCH", "/v1/geofences/{geofence_id}", fleet.PermAlertsWrite, 0, h.patchGeofence},
		{"DELETE", "/v1/geofences/{geofence_id}", fleet.PermAlertsWrite, 0, h.deleteGeofence},

		{"GET", "/v1/events", fleet.PermEventsRead, 0, h.listEvents},
		{"GET", "/v1/events/{event_id}", fleet.PermEventsRead, 0, h.getEvent},

		{"GET", "/v1/webhooks", fleet.PermWebhooksRead, 0, h.listWebhooks},
		{"POST", "/v1/webhooks", fleet.PermWebhooksWrite, 0, h.createWebhook},
		{"GET", "/v1/webhooks/{webhook_id}", fleet.PermWebhooksRead, 0, h.getWebhook},
		{"PATCH", "/v1/webhooks/{webhook_id}", fleet.PermWebhooksWrite, 0, h.patchWebhook},
		{"DELETE", "/v1/webhooks/{webhook_id}", fleet.PermWebhooksWrite, 0, h.deleteWebhook},
		{"POST", "/v1/webhooks/{webhook_id}/rotate_secret", fleet.PermWebhooksWrite, 0, h.rotateWebhookSecret},
		{"POST", "/v1/webhooks/{webhook_id}/test", fleet.PermWebhooksWrite, 0, h.testWebhook},
		{"GET", "/v1/webhooks/{webhook_id}/deliveries", fleet.PermWebhooksRead, 0, h.listDeliveries},
		{"POST", "/v1/webhooks/{webhook_id}/deliveries/{delivery_id}/retry", fleet.PermWebhooksWrite, 0, h.retryDelivery},
	}
}

// RouteInfo describes one route of the API.
type RouteInfo struct {
	Method     string
	Pattern    string           // Go ServeMux pattern, e.g. /v1/vehicles/{vehicle_id}
	Permission fleet.Permission // "" when any valid key may call it
}

// Routes lists every route the handler serves under /v1 (besides
// GET /v1/openapi.json, which needs no key).
func (h *Handler) Routes() []RouteInfo {
	out := make([]RouteInfo, len(h.routes))
	for i, rt := range h.routes {
		out[i] = RouteInfo{Method: rt.method, Pattern: rt.pattern, Permission: rt.perm}
	}
	return out
}
