package units

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// result is what a parse returned, flattened so cmp.Diff shows both parts.
type result struct {
	V   uint64
	Err string
}

func got(v uint64, err error) result {
	if err != nil {
		return result{Err: err.Error()}
	}
	return result{V: v}
}

func TestParseRate(t *testing.T) {
	const valid = "(valid: bit, Kbit, Mbit, Gbit, Tbit, bps, Kbps, Mbps, Gbps)"
	tests := []struct {
		in   string
		want result
	}{
		{"100Mbit", result{V: 100_000_000}},
		{"100mbit", result{V: 100_000_000}},
		{"100MBIT", result{V: 100_000_000}},
		{"100 Mbit", result{V: 100_000_000}},
		{" 100Mbit ", result{V: 100_000_000}},
		{"100Mbit/s", result{V: 100_000_000}},
		{"1bit", result{V: 1}},
		{"1bit/s", result{V: 1}},
		{"10Kbit", result{V: 10_000}},
		{"2.5Gbit", result{V: 2_500_000_000}},
		{"1Tbit", result{V: 1_000_000_000_000}},
		{"0.000001Mbit", result{V: 1}},
		{"10Mbps", result{V: 10_000_000}},
		{"10mbps", result{V: 10_000_000}},
		{"1Gbps", result{V: 1_000_000_000}},
		{"64Kbps", result{V: 64_000}},
		{"300bps", result{V: 300}},
		{"0Mbit", result{V: 0}},
		{"007Mbit", result{V: 7_000_000}},
		{"18446744073709551615bit", result{V: 18446744073709551615}},
		{"", result{Err: `cannot parse "": empty rate; expected a number and a unit, e.g. 100Mbit`}},
		{"   ", result{Err: `cannot parse "   ": empty rate; expected a number and a unit, e.g. 100Mbit`}},
		{"-10Mbit", result{Err: `cannot parse "-10Mbit": rates cannot be negative`}},
		{"Mbit", result{Err: `cannot parse "Mbit": expected a number and a unit, e.g. 100Mbit or 2.5Gbit`}},
		{"+5Mbit", result{Err: `cannot parse "+5Mbit": expected a number and a unit, e.g. 100Mbit or 2.5Gbit`}},
		{"2.Gbit", result{Err: `cannot parse "2.Gbit": expected a number and a unit, e.g. 100Mbit or 2.5Gbit`}},
		{"100", result{Err: `cannot parse "100": missing unit, e.g. 100Mbit ` + valid}},
		{"10Gbt", result{Err: `cannot parse "10Gbt": unknown unit "Gbt" ` + valid}},
		{"1e9bit", result{Err: `cannot parse "1e9bit": unknown unit "e9bit" ` + valid}},
		{"10Tbps", result{Err: `cannot parse "10Tbps": unknown unit "Tbps" ` + valid}},
		{"10Mbps/s", result{Err: `cannot parse "10Mbps/s": unknown unit "Mbps/s" ` + valid}},
		{"10MBps", result{Err: `cannot parse "10MBps": unit "MBps" has a capital B, which means bytes; rates are in bits per second ` + valid}},
		{"10MB/s", result{Err: `cannot parse "10MB/s": unit "MB/s" has a capital B, which means bytes; rates are in bits per second ` + valid}},
		{"1.5bit", result{Err: `cannot parse "1.5bit": not a whole number of bits per second`}},
		{"18446744073709551616bit", result{Err: `cannot parse "18446744073709551616bit": too large; the maximum is 18446744.073709551615Tbit`}},
		{"99999999Tbit", result{Err: `cannot parse "99999999Tbit": too large; the maximum is 18446744.073709551615Tbit`}},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, got(ParseRate(tt.in))); diff != "" {
				t.Errorf("ParseRate(%q) mismatch (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

func TestParseSize(t *testing.T) {
	const valid = "(valid: B, KB, MB, GB, KiB, MiB, GiB)"
	tests := []struct {
		in   string
		want result
	}{
		{"1500", result{V: 1500}},
		{"0", result{V: 0}},
		{"1500B", result{V: 1500}},
		{"64KiB", result{V: 65536}},
		{"64 KiB", result{V: 65536}},
		{"64kib", result{Err: `cannot parse "64kib": unit "kib" ends in a lowercase b, which usually means bits; sizes are in bytes: write KiB`}},
		{"64KIB", result{V: 65536}},
		{"1.5KiB", result{V: 1536}},
		{"2MiB", result{V: 2 << 20}},
		{"1GiB", result{V: 1 << 30}},
		{"64KB", result{V: 64000}},
		{"64kB", result{V: 64000}},
		{"2MB", result{V: 2_000_000}},
		{"1GB", result{V: 1_000_000_000}},
		{"", result{Err: `cannot parse "": empty size; expected a number of bytes with an optional unit, e.g. 64KiB`}},
		{"-1KiB", result{Err: `cannot parse "-1KiB": sizes cannot be negative`}},
		{"KiB", result{Err: `cannot parse "KiB": expected a number of bytes with an optional unit, e.g. 64KiB or 1500`}},
		{"64K", result{Err: `cannot parse "64K": ambiguous unit "K": write KiB (1024 bytes) or KB (1000 bytes)`}},
		{"64k", result{Err: `cannot parse "64k": ambiguous unit "k": write KiB (1024 bytes) or KB (1000 bytes)`}},
		{"1M", result{Err: `cannot parse "1M": ambiguous unit "M": write MiB (1048576 bytes) or MB (1000000 bytes)`}},
		{"1G", result{Err: `cannot parse "1G": ambiguous unit "G": write GiB (1073741824 bytes) or GB (1000000000 bytes)`}},
		{"64Ki", result{Err: `cannot parse "64Ki": ambiguous unit "Ki": write KiB`}},
		{"64Kb", result{Err: `cannot parse "64Kb": unit "Kb" ends in a lowercase b, which usually means bits; sizes are in bytes: write KiB (1024 bytes) or KB (1000 bytes)`}},
		{"64b", result{Err: `cannot parse "64b": unit "b" ends in a lowercase b, which usually means bits; sizes are in bytes: write B`}},
		{"64Kbit", result{Err: `cannot parse "64Kbit": "Kbit" is a rate unit; sizes are in bytes ` + valid}},
		{"64XB", result{Err: `cannot parse "64XB": unknown unit "XB" ` + valid}},
		{"1.5", result{Err: `cannot parse "1.5": not a whole number of bytes`}},
		{"1.0001KiB", result{Err: `cannot parse "1.0001KiB": not a whole number of bytes`}},
		{"18446744073709551615", result{V: 18446744073709551615}},
		{"20000000000GiB", result{Err: `cannot parse "20000000000GiB": too large; the maximum is 18446744073709551615 bytes`}},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, got(ParseSize(tt.in))); diff != "" {
				t.Errorf("ParseSize(%q) mismatch (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

func TestFormatRate(t *testing.T) {
	tests := []struct {
		in   uint64
		want string
	}{
		{0, "0bit"},
		{1, "1bit"},
		{999, "999bit"},
		{1000, "1Kbit"},
		{1500, "1.5Kbit"},
		{25_000_000, "25Mbit"},
		{100_000_000, "100Mbit"},
		{2_500_000_000, "2.5Gbit"},
		{2_500_000_001, "2.500000001Gbit"},
		{1_000_000_000_000, "1Tbit"},
		{^uint64(0), "18446744.073709551615Tbit"},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, FormatRate(tt.in)); diff != "" {
			t.Errorf("FormatRate(%d) mismatch (-want +got):\n%s", tt.in, diff)
		}
		if diff := cmp.Diff(result{V: tt.in}, got(ParseRate(FormatRate(tt.in)))); diff != "" {
			t.Errorf("ParseRate(FormatRate(%d)) does not round-trip (-want +got):\n%s", tt.in, diff)
		}
	}
}

func TestFormatSize(t *testing.T) {
	tests := []struct {
		in   uint64
		want string
	}{
		{0, "0B"},
		{1, "1B"},
		{1000, "1KB"},
		{1024, "1KiB"},
		{1500, "1500B"},
		{1536, "1536B"},
		{16384, "16KiB"},
		{65536, "64KiB"},
		{2_000_000, "2MB"},
		{3 << 20, "3MiB"},
		{1 << 30, "1GiB"},
		{^uint64(0), "18446744073709551615B"},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, FormatSize(tt.in)); diff != "" {
			t.Errorf("FormatSize(%d) mismatch (-want +got):\n%s", tt.in, diff)
		}
		if diff := cmp.Diff(result{V: tt.in}, got(ParseSize(FormatSize(tt.in)))); diff != "" {
			t.Errorf("ParseSize(FormatSize(%d)) does not round-trip (-want +got):\n%s", tt.in, diff)
		}
	}
}

func TestApprox(t *testing.T) {
	for _, tt := range []struct{ got, want string }{
		{ApproxRate(89722925), "89.7Mbit"}, {ApproxRate(100e6), "100Mbit"}, {ApproxRate(1.5e9), "1.5Gbit"},
		{ApproxRate(999), "999bit"}, {ApproxRate(0), "0bit"},
		{ApproxSize(4434482), "4.23MiB"}, {ApproxSize(65536), "64KiB"}, {ApproxSize(1000), "1000B"},
	} {
		if tt.got != tt.want {
			t.Errorf("got %q, want %q", tt.got, tt.want)
		}
	}
}
