package fleetclient

import (
	"context"
	"iter"
	"net/http"
	"net/url"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/fleetwire"
)

// Users walks the account's people: whom notification rules and report
// schedules may address.
func (c *Client) Users(ctx context.Context) iter.Seq2[fleet.Person, error] {
	return walk[fleet.Person](ctx, c, "/users", nil, fleet.MaxPageLimit)
}

// NotificationRuleParams describe a new notification rule: the person by
// UserID or by Email (one of them), and what they hear about. A zero
// DigestMinutes takes the server's default (5).
type NotificationRuleParams struct {
	UserID        string
	Email         string
	Events        []string
	AlertTypes    []fleet.AlertType
	VehicleIDs    []string
	Tags          []string
	QuietHours    *fleet.QuietHours
	DigestMinutes int
	Disabled      bool // create it turned off
}

// NotificationRules walks the account's notification rules (of userID
// alone unless it is "").
func (c *Client) NotificationRules(ctx context.Context, userID string) iter.Seq2[fleet.NotificationRule, error] {
	q := url.Values{}
	if userID != "" {
		q.Set("user_id", userID)
	}
	return walk[fleet.NotificationRule](ctx, c, "/notification_rules", q, fleet.MaxPageLimit)
}

// CreateNotificationRule creates a rule.
func (c *Client) CreateNotificationRule(ctx context.Context, p NotificationRuleParams) (fleet.NotificationRule, error) {
	enabled := !p.Disabled
	in := fleetwire.NotificationRuleInput{UserID: nullIfEmpty(p.UserID), Email: nullIfEmpty(p.Email), Events: p.Events,
		AlertTypes: p.AlertTypes, VehicleIDs: p.VehicleIDs, Tags: p.Tags, QuietHours: p.QuietHours, Enabled: &enabled}
	if p.DigestMinutes != 0 {
		in.DigestMinutes = &p.DigestMinutes
	}
	var out fleet.NotificationRule
	_, err := c.do(ctx, http.MethodPost, "/notification_rules", nil, in, &out)
	return out, err
}

// NotificationRule returns one rule.
func (c *Client) NotificationRule(ctx context.Context, id string) (fleet.NotificationRule, error) {
	var out fleet.NotificationRule
	_, err := c.do(ctx, http.MethodGet, "/notification_rules/"+url.PathEscape(id), nil, nil, &out)
	return out, err
}

// UpdateNotificationRule sends a merge patch of a rule.
func (c *Client) UpdateNotificationRule(ctx context.Context, id string, p fleet.NotificationRulePatch) (fleet.NotificationRule, error) {
	var out fleet.NotificationRule
	_, err := c.do(ctx, http.MethodPatch, "/notification_rules/"+url.PathEscape(id), nil, p, &out)
	return out, err
}

// DeleteNotificationRule deletes a rule.
func (c *Client) DeleteNotificationRule(ctx context.Context, id string) error {
	_, err := c.do(ctx, http.MethodDelete, "/notification_rules/"+url.PathEscape(id), nil, nil, nil)
	return err
}

// ReportScheduleParams describe a new report schedule: the person by
// UserID or Email, when (Frequency daily or weekly, Weekday for a weekly
// one, Hour in TZ) and what (Report summary, trips or alerts; GroupBy for
// a summary).
type ReportScheduleParams struct {
	UserID     string
	Email      string
	Frequency  string
	Weekday    string
	Hour       int
	TZ         string
	Report     string
	GroupBy    string
	VehicleIDs []string
	Tags       []string
	Disabled   bool
}

// ReportSchedules walks the account's report schedules (of userID alone
// unless it is "").
func (c *Client) ReportSchedules(ctx context.Context, userID string) iter.Seq2[fleet.ReportSchedule, error] {
	q := url.Values{}
	if userID != "" {
		q.Set("user_id", userID)
	}
	return walk[fleet.ReportSchedule](ctx, c, "/report_schedules", q, fleet.MaxPageLimit)
}

// CreateReportSchedule schedules a report by e-mail.
func (c *Client) CreateReportSchedule(ctx context.Context, p ReportScheduleParams) (fleet.ReportSchedule, error) {
	enabled := !p.Disabled
	in := fleetwire.ReportScheduleInput{UserID: nullIfEmpty(p.UserID), Email: nullIfEmpty(p.Email), Frequency: p.Frequency,
		Weekday: nullIfEmpty(p.Weekday), Hour: &p.Hour, TZ: nullIfEmpty(p.TZ), Report: p.Report, GroupBy: nullIfEmpty(p.GroupBy),
		VehicleIDs: p.VehicleIDs, Tags: p.Tags, Enabled: &enabled}
	var out fleet.ReportSchedule
	_, err := c.do(ctx, http.MethodPost, "/report_schedules", nil, in, &out)
	return out, err
}

// ReportSchedule returns one schedule.
func (c *Client) ReportSchedule(ctx context.Context, id string) (fleet.ReportSchedule, error) {
	var out fleet.ReportSchedule
	_, err := c.do(ctx, http.MethodGet, "/report_schedules/"+url.PathEscape(id), nil, nil, &out)
	return out, err
}

// UpdateReportSchedule sends a merge patch of a schedule.
func (c *Client) UpdateReportSchedule(ctx context.Context, id string, p fleet.ReportSchedulePatch) (fleet.ReportSchedule, error) {
	var out fleet.ReportSchedule
	_, err := c.do(ctx, http.MethodPatch, "/report_schedules/"+url.PathEscape(id), nil, p, &out)
	return out, err
}

// DeleteReportSchedule deletes a schedule.
func (c *Client) DeleteReportSchedule(ctx context.Context, id string) error {
	_, err := c.do(ctx, http.MethodDelete, "/report_schedules/"+url.PathEscape(id), nil, nil, nil)
	return err
}
