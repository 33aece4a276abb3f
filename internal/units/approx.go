package units

import "strconv"

// ApproxRate formats a measured rate in bits per second to three
// significant digits with the largest unit that keeps it at least 1:
// 89722925 is "89.7Mbit". Unlike FormatRate it is for reading, not for
// parsing back.
func ApproxRate(bps float64) string {
	return approx(bps, []unit{{float64(Tbit), "Tbit"}, {float64(Gbit), "Gbit"}, {float64(Mbit), "Mbit"}, {float64(Kbit), "Kbit"}}, "bit")
}

// ApproxSize formats a measured byte count to three significant digits
// in binary units: 4434482 is "4.23MiB".
func ApproxSize(bytes uint64) string {
	return approx(float64(bytes), []unit{{float64(GiB), "GiB"}, {float64(MiB), "MiB"}, {float64(KiB), "KiB"}}, "B")
}

type unit struct {
	mult float64
	name string
}

func approx(v float64, us []unit, base string) string {
	for _, u := range us {
		if v >= u.mult {
			return strconv.FormatFloat(v/u.mult, 'g', 3, 64) + u.name
		}
	}
	return strconv.FormatFloat(v, 'f', 0, 64) + base
}
