package topology

import "github.com/ftlab/ftlab/internal/units"

func fmtRate(v uint64) string { return units.FormatRate(v) }
func fmtSize(v uint64) string { return units.FormatSize(v) }
