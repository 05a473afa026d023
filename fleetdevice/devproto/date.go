package devproto

import "time"

// CivilTime is the UTC time of a date and time a device sent as fields,
// when they name one that exists: month 1 to 12, a day of that month (29
// February only in a leap year), hour 0 to 23, minute and second 0 to 59
// (no protocol here sends a leap second), year 0 to 9999; a year below
// 100 is 20yy. Otherwise ok is false and the time is zero: a date that
// cannot exist (day 32, hour 25) is no fix, never rolled over into another
// time as time.Date would roll it (API.md §13).
func CivilTime(year, month, day, hour, minute, second int) (t time.Time, ok bool) {
	if year >= 0 && year < 100 {
		year += 2000
	}
	if year < 0 || year > 9999 || month < 1 || month > 12 || day < 1 || day > daysIn(year, month) ||
		hour < 0 || hour > 23 || minute < 0 || minute > 59 || second < 0 || second > 59 {
		return time.Time{}, false
	}
	return time.Date(year, time.Month(month), day, hour, minute, second, 0, time.UTC), true
}

// daysIn is the number of days of a month (1 to 12) of a year.
func daysIn(year, month int) int {
	switch month {
	case 2:
		if year%4 == 0 && (year%100 != 0 || year%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// SetCivilTime sets p's time to the fields' (CivilTime), or, when they
// name no time that exists, leaves p without a fix and at no time.
func SetCivilTime(p *Position, year, month, day, hour, minute, second int) {
	t, ok := CivilTime(year, month, day, hour, minute, second)
	p.Time = t
	if !ok {
		p.Valid = false
	}
}
