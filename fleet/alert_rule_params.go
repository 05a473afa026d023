package fleet

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
)

// Alarm words that the telematics rules read (the vocabulary is
// alarmWords).
const (
	AlarmPowerCut         = "power_cut"
	AlarmPowerRestored    = "power_restored"
	AlarmHardAcceleration = "hard_acceleration"
	AlarmHardBraking      = "hard_braking"
	AlarmHardCornering    = "hard_cornering"
)

var harshTypes = []string{AlarmHardAcceleration, AlarmHardBraking, AlarmHardCornering}

// HarshTypes lists the alarms a harsh_driving rule may name.
func HarshTypes() []string { return slices.Clone(harshTypes) }

// shortDays are the days as working hours name them, Sunday first as time.Weekday counts.
var shortDays = []string{"sun", "mon", "tue", "wed", "thu", "fri", "sat"}

// WorkingDays lists the day names working hours take, Monday first.
func WorkingDays() []string { return append(slices.Clone(shortDays[1:]), shortDays[0]) }

// Defaults and limits of the telematics rules.
const (
	DefaultThresholdG = 0.4 // harsh_driving: g of speed change
	DefaultThresholdV = 9.0 // power_cut: volts the power is back above
	MaxThresholdG     = 2.0
	MaxThresholdV     = 100.0
	MaxThresholdL     = 10_000.0
	// HarshGap is the longest time between two forward points whose speed
	// change a harsh_driving rule judges.
	HarshGap = 5 * time.Second
	// standardG is one g in m/s².
	standardG = 9.80665
)

// WorkingHours are the hours of the week when a vehicle is meant to be
// used, in a time zone: on each of Days (empty: every day), from From
// (inclusive) to To (exclusive), "HH:MM" in the zone's local time. A window
// whose To is earlier than its From runs overnight into the next day.
type WorkingHours struct {
	TZ   string   `json:"tz"`
	Days []string `json:"days"`
	From string   `json:"from"`
	To   string   `json:"to"`
}

// RuleParams are the settings of the telematics rule types; each type uses
// only its own and the others are nil.
type RuleParams struct {
	Alarms           []string      `json:"alarms"`            // alarm: the alarms it opens on; empty: every alarm
	OutsideHours     *WorkingHours `json:"outside_hours"`     // ignition_on: alert only outside these hours
	ThresholdPercent *float64      `json:"threshold_percent"` // fuel_drop: percent points
	ThresholdL       *float64      `json:"threshold_l"`       // fuel_drop: litres
	Types            []string      `json:"types"`             // harsh_driving: the harsh alarms; empty: all
	ThresholdG       *float64      `json:"threshold_g"`       // harsh_driving: derived from speed change above this
	ThresholdV       *float64      `json:"threshold_v"`       // power_cut: resolved when power is back above this
}

// Clone returns a copy that shares no memory with p.
func (p RuleParams) Clone() RuleParams {
	p.Alarms = slices.Clone(p.Alarms)
	p.Types = slices.Clone(p.Types)
	if p.OutsideHours != nil {
		h := *p.OutsideHours
		h.Days = slices.Clone(h.Days)
		p.OutsideHours = &h
	}
	p.ThresholdPercent = clonePtr(p.ThresholdPercent)
	p.ThresholdL = clonePtr(p.ThresholdL)
	p.ThresholdG = clonePtr(p.ThresholdG)
	p.ThresholdV = clonePtr(p.ThresholdV)
	return p
}

// normaliseParams fills the defaults of the rule's type and tidies lists:
// alarms and types deduplicated (an empty list, every kind, is []), days
// deduplicated and lower case.
func normaliseParams(r *AlertRule) {
	dedupe := func(in []string) []string {
		out := []string{}
		for _, s := range in {
			if !slices.Contains(out, s) {
				out = append(out, s)
			}
		}
		return out
	}
	p := &r.RuleParams
	if r.Type == AlertAlarm || p.Alarms != nil {
		p.Alarms = dedupe(p.Alarms)
	}
	if r.Type == AlertHarshDriving || p.Types != nil {
		p.Types = dedupe(p.Types)
	}
	if h := p.OutsideHours; h != nil {
		c := *h
		c.TZ, c.From, c.To = strings.TrimSpace(c.TZ), strings.TrimSpace(c.From), strings.TrimSpace(c.To)
		days := make([]string, 0, len(c.Days))
		for _, d := range c.Days {
			days = append(days, strings.ToLower(strings.TrimSpace(d)))
		}
		c.Days = dedupe(days)
		p.OutsideHours = &c
	}
	switch r.Type {
	case AlertHarshDriving:
		if p.ThresholdG == nil {
			p.ThresholdG = ptr(DefaultThresholdG)
		}
	case AlertPowerCut:
		if p.ThresholdV == nil {
			p.ThresholdV = ptr(DefaultThresholdV)
		}
	}
}

// validateParams checks the telematics settings of the rule: those of its
// type, and that no other type's are given. forbid reports a field set on
// a rule of another type.
func (r *AlertRule) validateParams(val *Validator, forbid func(set bool, field string)) {
	p := &r.RuleParams
	positive := func(v *float64, field string, max float64) {
		if v != nil {
			val.Check(!math.IsNaN(*v) && *v > 0 && *v <= max, field, "must be above 0 and at most %s", formatNum(max))
		}
	}
	switch r.Type {
	case AlertAlarm:
		for i, a := range p.Alarms {
			val.Check(slices.Contains(alarmWords, a), fmt.Sprintf("alarms[%d]", i), "%q is not an alarm; one of %s", a, strings.Join(alarmWords, ", "))
		}
	case AlertIgnitionOn:
		if h := p.OutsideHours; h != nil {
			h.validate(val, "outside_hours.")
		}
	case AlertIdling:
		if r.AfterMinutes == nil {
			val.Add("after_minutes", "is required for an idling rule (minutes of idling)")
		} else {
			val.Check(*r.AfterMinutes >= 1 && *r.AfterMinutes <= MaxAfterMinutes, "after_minutes", "must be between 1 and %d", MaxAfterMinutes)
		}
	case AlertFuelDrop:
		switch {
		case p.ThresholdPercent == nil && p.ThresholdL == nil:
			val.Add("threshold_percent", "a fuel_drop rule needs threshold_percent (percent points) or threshold_l (litres)")
		case p.ThresholdPercent != nil && p.ThresholdL != nil:
			val.Add("threshold_l", "give threshold_percent or threshold_l, not both")
		}
		positive(p.ThresholdPercent, "threshold_percent", 100)
		positive(p.ThresholdL, "threshold_l", MaxThresholdL)
	case AlertHarshDriving:
		for i, t := range p.Types {
			val.Check(slices.Contains(harshTypes, t), fmt.Sprintf("types[%d]", i), "%q is not a harsh driving type; one of %s", t, strings.Join(harshTypes, ", "))
		}
		positive(p.ThresholdG, "threshold_g", MaxThresholdG)
	case AlertPowerCut:
		positive(p.ThresholdV, "threshold_v", MaxThresholdV)
	}
	forbid(r.Type != AlertAlarm && p.Alarms != nil, "alarms")
	forbid(r.Type != AlertIgnitionOn && p.OutsideHours != nil, "outside_hours")
	forbid(r.Type != AlertFuelDrop && p.ThresholdPercent != nil, "threshold_percent")
	forbid(r.Type != AlertFuelDrop && p.ThresholdL != nil, "threshold_l")
	forbid(r.Type != AlertHarshDriving && p.Types != nil, "types")
	forbid(r.Type != AlertHarshDriving && p.ThresholdG != nil, "threshold_g")
	forbid(r.Type != AlertPowerCut && p.ThresholdV != nil, "threshold_v")
}

func (h *WorkingHours) validate(val *Validator, prefix string) {
	if _, err := LoadTZ(h.TZ); err != nil {
		val.Add(prefix+"tz", "must be an IANA time zone such as Europe/Berlin")
	}
	for i, d := range h.Days {
		val.Check(slices.Contains(shortDays, d), fmt.Sprintf("%sdays[%d]", prefix, i), "%q is not a day; one of mon, tue, wed, thu, fri, sat, sun", d)
	}
	_, okFrom := clockMinutes(h.From)
	_, okTo := clockMinutes(h.To)
	val.Check(okFrom, prefix+"from", "must be a time of day HH:MM, e.g. 07:00")
	val.Check(okTo, prefix+"to", "must be a time of day HH:MM, e.g. 18:00")
	val.Check(!okFrom || !okTo || h.From != h.To, prefix+"to", "must differ from %sfrom", prefix)
}

// hours is WorkingHours compiled: the zone loaded, the days as a set of
// time.Weekday bits, the window in minutes after midnight.
type hours struct {
	loc      *time.Location
	days     uint8
	from, to int
}

func (h *WorkingHours) compile() (*hours, error) {
	loc, err := LoadTZ(h.TZ)
	if err != nil {
		return nil, err
	}
	c := &hours{loc: loc}
	c.from, _ = clockMinutes(h.From)
	c.to, _ = clockMinutes(h.To)
	for _, d := range h.Days {
		if i := slices.Index(shortDays, d); i >= 0 {
			c.days |= 1 << i
		}
	}
	if len(h.Days) == 0 {
		c.days = 0x7f
	}
	return c, nil
}

// within reports whether at falls inside the working hours: on a listed
// day from from (inclusive) to to (exclusive), or, for an overnight window,
// after from on a listed day or before to on the day after one.
func (h *hours) within(at time.Time) bool {
	local := at.In(h.loc)
	m := local.Hour()*60 + local.Minute()
	day := func(d time.Weekday) bool { return h.days&(1<<d) != 0 }
	wd := local.Weekday()
	if h.from < h.to {
		return day(wd) && m >= h.from && m < h.to
	}
	return day(wd) && m >= h.from || day((wd+6)%7) && m < h.to
}
