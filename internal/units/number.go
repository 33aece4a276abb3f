package units

import (
	"math/big"
	"strings"
)

// splitNumber splits "2.5 Gbit" into its integer digits, fraction digits
// and unit. ok is false when s does not start with a plain decimal number.
// Exponents, signs and thousands separators are deliberately unsupported:
// they are rare in hand-written files and easy to misread.
func splitNumber(s string) (intPart, fracPart, unit string, ok bool) {
	i := 0
	for i < len(s) && isDigit(s[i]) {
		i++
	}
	if i == 0 {
		return "", "", "", false
	}
	intPart = s[:i]
	if i < len(s) && s[i] == '.' {
		j := i + 1
		for j < len(s) && isDigit(s[j]) {
			j++
		}
		if j == i+1 { // "2." or "2.x"
			return "", "", "", false
		}
		fracPart = s[i+1 : j]
		i = j
	}
	return intPart, fracPart, strings.TrimSpace(s[i:]), true
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// scale computes (intPart.fracPart) * mult exactly. whole is false when the
// result has a fractional part; fits is false when it exceeds uint64. Big
// integers keep this exact for any number of digits, so "0.000001Mbit"
// is 1 bit and not a rounding accident.
func scale(intPart, fracPart string, mult uint64) (v uint64, whole, fits bool) {
	n, _ := new(big.Int).SetString(intPart+fracPart, 10)
	n.Mul(n, new(big.Int).SetUint64(mult))
	d := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(len(fracPart))), nil)
	q, r := new(big.Int).QuoRem(n, d, new(big.Int))
	if r.Sign() != 0 {
		return 0, false, true
	}
	if !q.IsUint64() {
		return 0, true, false
	}
	return q.Uint64(), true, true
}

// formatScaled writes v/mult as an exact decimal followed by unit.
func formatScaled(v, mult uint64, unit string) string {
	q, r := v/mult, v%mult
	var b strings.Builder
	b.WriteString(uitoa(q))
	if r != 0 {
		frac := uitoa(r)
		digits := len(uitoa(mult)) - 1 // mult is a power of ten here
		frac = strings.Repeat("0", digits-len(frac)) + frac
		b.WriteByte('.')
		b.WriteString(strings.TrimRight(frac, "0"))
	}
	b.WriteString(unit)
	return b.String()
}

func uitoa(v uint64) string { return new(big.Int).SetUint64(v).String() }
