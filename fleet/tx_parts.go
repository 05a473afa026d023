package fleet

// A use case opens its transaction with the whole Tx (Store.Update, View)
// and hands each helper only the areas it reads and writes: one area's
// part (VehicleTx, AlertTx...) or one of the combinations below, named for
// what needs them. A helper's signature says what it touches, and a test's
// fake of it implements that much. TestHelpersTakeTheirAreas keeps the rule.

// emitTx is what emit needs: the event, a pending delivery of it to each
// endpoint that takes it, and the outbox write of each notification rule
// that takes it (the account's configuration version, its rules, and a
// vehicle's tags when a rule filters by them).
type emitTx interface {
	EventTx
	WebhookTx
	notifyReadTx
	VehicleTx
}

// openAlertTx is what opening an alert needs: the alert and its
// alert.created event.
type openAlertTx interface {
	AlertTx
	emitTx
}

// vehicleAlertTx is what judging a location batch reads (the account's
// alert configuration, its vehicles and their latest alerts), and what a
// rule's vehicles and geofence are checked against.
type vehicleAlertTx interface {
	VehicleTx
	AlertTx
}

// resolveTx is what a rule alert's resolving needs: the vehicle, whose
// AlertsVersion moves, and the alert its silence may open at once.
type resolveTx interface {
	VehicleTx
	openAlertTx
}

// scheduleTx is what reviewing a maintenance schedule needs: the work order
// it may open, and the events and alert of its becoming due.
type scheduleTx interface {
	MaintenanceTx
	openAlertTx
}

// recordServiceTx is what recording a completed work order's service needs:
// its schedule, reviewed, and the vehicle's odometer.
type recordServiceTx interface {
	VehicleTx
	scheduleTx
}

// tripWriteTx is what writing a batch's trips needs: the trips and their
// events.
type tripWriteTx interface {
	TripTx
	emitTx
}

// retrackTx is what recomputing a vehicle's trips reads and writes: its
// trips, its stored reports, and the vehicle, whose driver a new trip
// takes.
type retrackTx interface {
	TripTx
	LocationTx
	VehicleTx
}

// trackTx is what tracking a batch's trips needs: the trips, the stored
// reports they are recomputed from, their events, and the vehicles, whose
// driver a trip that starts takes.
type trackTx interface {
	tripWriteTx
	LocationTx
	VehicleTx
}

// advanceTx is what moving a vehicle through its forward points needs: the
// alerts they open, and their telematics (the driver a key names, and the
// events).
type advanceTx interface {
	openAlertTx
	telemetryTx
}

// ingestTx is what a location batch's write transaction needs: every area
// but keys, users and devices. It stores the points, moves the vehicles
// (their drivers too), opens the alerts and events the judgement calls
// for, reviews the schedules whose vehicle's odometer moved and tracks the
// trips.
type ingestTx interface {
	LocationTx
	VehicleTx
	scheduleTx
	trackTx
	DriverTx
}

// sharedTx is what the public page of a share link reads: the link, its
// account's name and its vehicle.
type sharedTx interface {
	ShareLinkTx
	KeyTx
	VehicleTx
}
