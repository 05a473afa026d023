package fleetweb

import (
	"testing"

	"github.com/matryer/is"
)

// An amount typed in a currency's units is its minor units, with as many
// decimals as the currency has; and it is written back the same way.
func TestAmounts(t *testing.T) {
	is := is.New(t)
	for _, tc := range []struct {
		text, currency string
		minor          int64
		ok             bool
		back           string
	}{
		{"120.50", "EUR", 12050, true, "120.50"},
		{"120.5", "EUR", 12050, true, "120.50"},
		{" 120 ", "USD", 12000, true, "120.00"},
		{".05", "EUR", 5, true, "0.05"},
		{"-3", "EUR", -300, true, "-3.00"},
		{"1200", "JPY", 1200, true, "1200"},
		{"1.5", "JPY", 0, false, ""},
		{"1.234", "KWD", 1234, true, "1.234"},
		{"1.505", "EUR", 0, false, ""},
		{"1,50", "EUR", 0, false, ""},
		{"1e3", "EUR", 0, false, ""},
		{".", "EUR", 0, false, ""},
		{"-", "EUR", 0, false, ""},
		{"+1", "EUR", 0, false, ""},
		{"99999999999999999999", "EUR", 0, false, ""},
	} {
		got, ok := parseAmount(tc.text, tc.currency)
		is.Equal(ok, tc.ok) // tc.text
		if !ok {
			is.Equal(got, nil)
			continue
		}
		is.Equal(*got, tc.minor) // tc.text
		is.Equal(formatAmount(*got, tc.currency), tc.back)
	}
	none, ok := parseAmount("  ", "EUR")
	is.True(ok)
	is.Equal(none, nil)
}
