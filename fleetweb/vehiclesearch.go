package fleetweb

import (
	"cmp"
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"

	"github.com/fleetkit/fleetapi/fleet"
)

// Vehicle pickers list the first maxVehicleChoices vehicles; an account
// with more gets a search beside each picker (static/app.js), fed by
// /vehicles/choices: the vehicles whose name, plate or VIN contains the
// typed text, by name, at most maxSearchResults.

// maxSearchResults is how many vehicles one search answers.
const maxSearchResults = 20

type searchResult struct {
	ID           string `json:"id"`
	Name         string `json:"name"`
	LicensePlate string `json:"license_plate"`
}

type searchAnswer struct {
	Vehicles []searchResult `json:"vehicles"`
	More     bool           `json:"more"` // more vehicles match: type more of the name
}

// vehicleSearch answers GET /vehicles/choices?q=: the account's vehicles
// that match, by name; a text with control characters is refused as the
// API refuses it.
func (h *Handler) vehicleSearch(w http.ResponseWriter, r *http.Request, us fleet.UserSession) {
	ctx := r.Context()
	q := strings.TrimSpace(r.URL.Query().Get("q"))
	ans := searchAnswer{Vehicles: []searchResult{}}
	if q != "" {
		vs, more, err := walk(ctx, maxListed, func(lq fleet.ListQuery) (fleet.List[fleet.Vehicle], error) {
			return h.svc.ListVehicles(ctx, us.Principal(), fleet.VehicleFilter{Query: q}, lq)
		})
		if err != nil {
			h.failJSON(w, r, err)
			return
		}
		slices.SortFunc(vs, func(a, b fleet.Vehicle) int {
			return cmp.Or(strings.Compare(strings.ToLower(a.Name), strings.ToLower(b.Name)), strings.Compare(a.ID, b.ID))
		})
		ans.More = more || len(vs) > maxSearchResults
		for _, v := range vs[:min(len(vs), maxSearchResults)] {
			ans.Vehicles = append(ans.Vehicles, searchResult{ID: v.ID, Name: v.Name, LicensePlate: v.LicensePlate})
		}
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	json.NewEncoder(w).Encode(ans)
}

// withChosen adds to a picker's choices the chosen vehicles it does not
// list (found by a search, beyond the first maxVehicleChoices), so that a
// form shown again keeps them; an id the account does not have is left
// out.
func (h *Handler) withChosen(ctx context.Context, p fleet.Principal, choices []vehicleChoice, chosen ...string) []vehicleChoice {
	extra := h.chosenBeyond(ctx, p, func(id string) bool {
		return slices.ContainsFunc(choices, func(c vehicleChoice) bool { return c.ID == id })
	}, chosen)
	if len(extra) == 0 {
		return choices
	}
	out := make([]vehicleChoice, 0, len(extra)+len(choices))
	for _, v := range extra {
		out = append(out, vehicleChoice{ID: v.ID, Name: v.Name})
	}
	return append(out, choices...)
}

// chosenBeyond reads the chosen vehicles that a picker does not list.
func (h *Handler) chosenBeyond(ctx context.Context, p fleet.Principal, listed func(id string) bool, chosen []string) []fleet.Vehicle {
	var missing []string
	for _, id := range chosen {
		if id != "" && !listed(id) {
			missing = append(missing, id)
		}
	}
	if len(missing) == 0 || len(missing) > fleet.MaxPageLimit {
		return nil
	}
	l, err := h.svc.ListVehicles(ctx, p, fleet.VehicleFilter{IDs: missing}, fleet.ListQuery{Limit: fleet.MaxPageLimit})
	if err != nil {
		return nil
	}
	return l.Items
}
