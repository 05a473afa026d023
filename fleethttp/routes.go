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
	}
}
