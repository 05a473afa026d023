package fleethttp

import (
	"net/http"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/fleetwire"
)

// Notification rules, report schedules and the account's people (API.md
// §17) go out as fleet's types, whose JSON is the API's.

func (h *Handler) listPeople(c *call) error {
	_, lq, err := c.listQuery()
	if err != nil {
		return err
	}
	l, err := h.svc.ListPeople(c.r.Context(), c.p, lq)
	if err != nil {
		return err
	}
	return c.list(l.Items, l.NextCursor, l.HasMore)
}

func (h *Handler) createNotificationRule(c *call) error {
	req, err := decode[fleetwire.NotificationRuleInput](c.body, false)
	if err != nil {
		return err
	}
	r, err := h.svc.CreateNotificationRule(c.r.Context(), c.p, fleet.NotificationRuleInput{
		UserID: deref(req.UserID), Email: deref(req.Email), Events: req.Events, AlertTypes: req.AlertTypes,
		VehicleIDs: req.VehicleIDs, Tags: req.Tags, Channel: deref(req.Channel), QuietHours: req.QuietHours,
		DigestMinutes: req.DigestMinutes, Enabled: req.Enabled,
	})
	if err != nil {
		return err
	}
	return c.ok(http.StatusCreated, r)
}

func (h *Handler) getNotificationRule(c *call) error {
	r, err := h.svc.NotificationRule(c.r.Context(), c.p, c.r.PathValue("notification_rule_id"))
	if err != nil {
		return err
	}
	return c.ok(http.StatusOK, r)
}

func (h *Handler) listNotificationRules(c *call) error {
	q, lq, err := c.listQuery()
	if err != nil {
		return err
	}
	l, err := h.svc.ListNotificationRules(c.r.Context(), c.p, q.Get("user_id"), lq)
	if err != nil {
		return err
	}
	return c.list(l.Items, l.NextCursor, l.HasMore)
}

func (h *Handler) patchNotificationRule(c *call) error {
	p, err := decode[fleet.NotificationRulePatch](c.body, false)
	if err != nil {
		return err
	}
	r, err := h.svc.UpdateNotificationRule(c.r.Context(), c.p, c.r.PathValue("notification_rule_id"), p)
	if err != nil {
		return err
	}
	return c.ok(http.StatusOK, r)
}

func (h *Handler) deleteNotificationRule(c *call) error {
	d, err := h.svc.DeleteNotificationRule(c.r.Context(), c.p, c.r.PathValue("notification_rule_id"))
	if err != nil {
		return err
	}
	return c.ok(http.StatusOK, d)
}

func (h *Handler) createReportSchedule(c *call) error {
	req, err := decode[fleetwire.ReportScheduleInput](c.body, false)
	if err != nil {
		return err
	}
	hour := 7
	if req.Hour != nil {
		hour = *req.Hour
	}
	r, err := h.svc.CreateReportSchedule(c.r.Context(), c.p, fleet.ReportScheduleInput{
		UserID: deref(req.UserID), Email: deref(req.Email), Frequency: req.Frequency, Weekday: deref(req.Weekday),
		Hour: hour, TZ: deref(req.TZ), Report: req.Report, GroupBy: deref(req.GroupBy), VehicleIDs: req.VehicleIDs,
		Tags: req.Tags, Enabled: req.Enabled,
	})
	if err != nil {
		return err
	}
	return c.ok(http.StatusCreated, r)
}

func (h *Handler) getReportSchedule(c *call) error {
	r, err := h.svc.ReportSchedule(c.r.Context(), c.p, c.r.PathValue("report_schedule_id"))
	if err != nil {
		return err
	}
	return c.ok(http.StatusOK, r)
}

func (h *Handler) listReportSchedules(c *call) error {
	q, lq, err := c.listQuery()
	if err != nil {
		return err
	}
	l, err := h.svc.ListReportSchedules(c.r.Context(), c.p, q.Get("user_id"), lq)
	if err != nil {
		return err
	}
	return c.list(l.Items, l.NextCursor, l.HasMore)
}

func (h *Handler) patchReportSchedule(c *call) error {
	p, err := decode[fleet.ReportSchedulePatch](c.body, false)
	if err != nil {
		return err
	}
	r, err := h.svc.UpdateReportSchedule(c.r.Context(), c.p, c.r.PathValue("report_schedule_id"), p)
	if err != nil {
		return err
	}
	return c.ok(http.StatusOK, r)
}

func (h *Handler) deleteReportSchedule(c *call) error {
	d, err := h.svc.DeleteReportSchedule(c.r.Context(), c.p, c.r.PathValue("report_schedule_id"))
	if err != nil {
		return err
	}
	return c.ok(http.StatusOK, d)
}

const descNotifications = "Notifications are e-mailed by the server with SMTP (`fleetserver serve --smtp-url`); without it, rules are kept and nothing is sent. " +
	"The first matching event of a quiet rule is e-mailed at once; what follows within `digest_minutes` is gathered into one digest e-mail at the window's end " +
	"(the first 50 events listed, then \"and N more\"); during `quiet_hours` everything is held and sent as one digest when they end. " +
	"Each e-mail has a plain-text and an HTML part, a link to the dashboard page of what it is about, and a one-click unsubscribe link (RFC 8058) that turns the rule off. " +
	"A person who is not an admin, acting from the dashboard, sees and sets their own rules only."

func registerNotifyComponents(g *generator) {
	comp[fleet.Person](g, "Person", output, func(s *shape) {
		s.describe("A person of the account, who signs in to the dashboard and whom notification rules and report schedules address.").
			replace("user_id", id(fleet.PrefixUser)).
			with("email", "format", "email").
			replace("role", enum(fleet.Roles(), ""))
	})
	comp[fleet.QuietHours](g, "QuietHours", input, func(s *shape) {
		s.describe("Hours of the day when nothing is sent at once: what happens then is held and sent as one digest when they end. `from` after `to` spans midnight.").
			require("tz from to").
			with("tz", "description", "An IANA time zone, e.g. Europe/Berlin.").
			with("from to", "pattern", `^([01][0-9]|2[0-3]):[0-5][0-9]$`)
	})
	ruleFields := func(s *shape) *shape {
		return s.with("events", "maxItems", fleet.MaxRuleFilter, "description", "Event types the rule takes (see the Event schema), e.g. `alert.created`.").
			with("alert_types", "maxItems", fleet.MaxRuleFilter, "description", "Only alerts of these types (for alert.* events); empty: any.").
			with("vehicle_ids", "maxItems", fleet.MaxRuleFilter, "description", "Only events about these vehicles; empty: every vehicle.").
			with("tags", "maxItems", fleet.MaxRuleFilter, "description", "Only events about vehicles carrying one of these tags; empty: any.").
			replace("channel", single(fleet.ChannelEmail)).
			with("digest_minutes", "minimum", 1, "maximum", fleet.MaxDigestMinutes, "description", "The digest window after a first e-mail. Default 5.")
	}
	comp[fleet.NotificationRule](g, "NotificationRule", output, func(s *shape) {
		ruleFields(s).describe(descNotifications).
			replace("notification_rule_id", id(fleet.PrefixNotificationRule)).
			replace("user_id", id(fleet.PrefixUser)).
			replace("quiet_hours", o("oneOf", []any{ref("QuietHours"), o("type", "null")}))
	})
	comp[fleetwire.NotificationRuleInput](g, "NotificationRuleInput", input, func(s *shape) {
		ruleFields(s).describe("Creates a rule for a person of the account, named by `user_id` or by `email` (one of them; see GET /v1/users). "+
			"An address that mail cannot be sent to (a CR or LF, a display name, several addresses) is 422 naming the field. "+
			"At most "+num(fleet.MaxNotificationRules)+" rules an account (409 conflict).").
			require("events").
			null("user_id email digest_minutes enabled").
			replace("channel", o("type", []string{"string", "null"}, "enum", []any{fleet.ChannelEmail, nil}, "description", "email (the default).")).
			replace("quiet_hours", o("oneOf", []any{ref("QuietHours"), o("type", "null")})).
			with("email", "format", "email")
	})
	comp[fleet.NotificationRulePatch](g, "NotificationRulePatch", input, func(s *shape) {
		ruleFields(s).describe("JSON merge patch: an absent field is unchanged; null clears quiet_hours and resets digest_minutes to 5. The rule's person does not change.").
			replace("quiet_hours", o("oneOf", []any{ref("QuietHours"), o("type", "null")})).
			null("digest_minutes")
	})
	comp[fleet.NotificationRuleDeleted](g, "NotificationRuleDeleted", output, func(s *shape) { s.replace("deleted", single(true)) })

	schedFields := func(s *shape) *shape {
		return s.replace("frequency", enum([]string{fleet.FrequencyDaily, fleet.FrequencyWeekly}, "")).
			with("weekday", "description", "For a weekly report: monday ... sunday (default monday).").
			with("hour", "minimum", 0, "maximum", 23, "description", "The hour it is sent at, in `tz`. Default 7.").
			with("tz", "description", "An IANA time zone, e.g. Europe/Berlin. Default UTC.").
			replace("report", enum([]string{fleet.ReportSummary, fleet.ReportTrips, fleet.ReportAlerts}, "summary: GET /v1/reports/summary's CSV; trips: every trip's row of the trips CSV; alerts: the alerts opened.")).
			with("group_by", "description", "For a summary: vehicle (default), day or driver (every vehicle: vehicle_ids and tags are refused).").
			with("vehicle_ids", "maxItems", fleet.MaxRuleFilter, "description", "Only these vehicles; empty: every vehicle.").
			with("tags", "maxItems", fleet.MaxRuleFilter, "description", "Also every vehicle carrying one of these tags.")
	}
	comp[fleet.ReportSchedule](g, "ReportSchedule", output, func(s *shape) {
		schedFields(s).describe("A report e-mailed on a schedule with its CSV attached (the API's CSV). A run covers the day (or week) before it, "+
			"in the schedule's time zone; each period runs once whatever the number of servers, and a run missed while no server ran is sent at the next start (the latest missed period).").
			replace("report_schedule_id", id(fleet.PrefixReportSchedule)).
			replace("user_id", id(fleet.PrefixUser)).
			with("next_run_at", "description", "When the next run is due.")
	})
	comp[fleetwire.ReportScheduleInput](g, "ReportScheduleInput", input, func(s *shape) {
		schedFields(s).describe("Creates a schedule for a person of the account, named by `user_id` or by `email`. At most "+num(fleet.MaxReportSchedules)+" an account (409 conflict).").
			require("frequency report").
			null("user_id email weekday hour tz group_by enabled").
			with("email", "format", "email")
	})
	comp[fleet.ReportSchedulePatch](g, "ReportSchedulePatch", input, func(s *shape) {
		schedFields(s).describe("JSON merge patch: an absent field is unchanged. A change of when it runs moves next_run_at.")
	})
	comp[fleet.ReportScheduleDeleted](g, "ReportScheduleDeleted", output, func(s *shape) { s.replace("deleted", single(true)) })
}

func userFilter() param {
	return idFilter("user_id", "Only this person's.")
}
