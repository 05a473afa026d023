// Package fleetwire holds the JSON bodies of the Fleet HTTP API that are
// not fleet types: the envelope every answer comes in, its pagination and
// error, the answers about accounts, keys, stream tokens and share links,
// and the request bodies of the operations that create things. Vehicles, locations,
// events, work orders, alerts, webhooks, devices and drivers travel as the fleet
// types themselves (fleet.Vehicle, fleet.Point...), whose JSON is the API's.
//
// It is the one definition of these shapes for both sides of the wire:
// fleethttp's handler decodes requests into these types and encodes its
// answers from them (and its OpenAPI document is generated from them), and
// fleetclient sends and reads them. It imports only the standard library
// and fleet, so a program that calls the API links neither the handler nor
// its dependencies.
//
// Within /v1 these types only grow, as the API does
// (docs/compatibility.md): a client reading an answer ignores the
// members it does not know.
package fleetwire
