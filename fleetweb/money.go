package fleetweb

import (
	"strconv"
	"strings"
)

// Amounts of money: the API keeps a cost in the minor units of its
// currency (cost_cents); the forms take and show it in the currency's
// units, 120.50 for 12050 cents of EUR.

// minorDigits is how many decimal digits the minor unit of an ISO 4217
// currency has: 0 for the yen and its like, 3 for the dinars of Bahrain,
// Iraq, Jordan, Kuwait, Libya and Tunisia and the rial of Oman, 2 for the
// others (and for a code that is not yet valid).
func minorDigits(currency string) int {
	switch strings.ToUpper(strings.TrimSpace(currency)) {
	case "BIF", "CLP", "DJF", "GNF", "ISK", "JPY", "KMF", "KRW", "PYG", "RWF", "UGX", "UYI", "VND", "VUV", "XAF", "XOF", "XPF":
		return 0
	case "BHD", "IQD", "JOD", "KWD", "LYD", "OMR", "TND":
		return 3
	}
	return 2
}

// parseAmount reads an amount typed in the currency's units ("120.50",
// "120", "-3") as minor units; "" is none. ok is false when the text is
// not such a number or has more decimals than the currency's minor unit.
func parseAmount(text, currency string) (minor *int64, ok bool) {
	t := strings.TrimSpace(text)
	if t == "" {
		return nil, true
	}
	sign := ""
	if rest, found := strings.CutPrefix(t, "-"); found {
		sign, t = "-", rest
	}
	whole, frac, _ := strings.Cut(t, ".")
	digits := minorDigits(currency)
	if whole == "" && frac == "" || len(frac) > digits || !allDigits(whole) || !allDigits(frac) {
		return nil, false
	}
	n, err := strconv.ParseInt(sign+"0"+whole+frac+strings.Repeat("0", digits-len(frac)), 10, 64)
	if err != nil {
		return nil, false
	}
	return &n, true
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// formatAmount writes minor units in the currency's units: 12050 of EUR
// is "120.50", 1200 of JPY "1200".
func formatAmount(minor int64, currency string) string {
	digits := minorDigits(currency)
	s := strconv.FormatInt(minor, 10)
	sign := ""
	if rest, found := strings.CutPrefix(s, "-"); found {
		sign, s = "-", rest
	}
	if digits == 0 {
		return sign + s
	}
	if len(s) <= digits {
		s = strings.Repeat("0", digits-len(s)+1) + s
	}
	return sign + s[:len(s)-digits] + "." + s[len(s)-digits:]
}
