package scenario

import "encoding/json"

// FormatVersion numbers the layout of Resolved and RunRecord; it changes
// whenever a field changes meaning, so results can be read back safely.
const FormatVersion = 1

// Resolved is the whole scenario with every default filled in and every
// random selection made, as recorded with results.
type Resolved struct {
	Format int `json:"format"`
	*Scenario
}

// Resolved returns the scenario's record, ready for encoding/json.
func (s *Scenario) Resolved() Resolved { return Resolved{FormatVersion, s} }

// RunRecord is what one run needs to be reproduced and analysed: the
// scenario it belongs to, its cell's resolved configuration and the run
// itself (seed, messages, faults, timeline, CCT bound). It is the
// run.json of a result directory.
type RunRecord struct {
	Format   int      `json:"format"`
	Scenario string   `json:"scenario"`
	File     string   `json:"file"`
	Cell     string   `json:"cell"`
	Choices  []Choice `json:"choices,omitempty"`
	Config   *Config  `json:"config"`
	Run      *Run     `json:"run"`
}

// Record returns the record of one run of a cell.
func (s *Scenario) Record(c *Cell, r *Run) RunRecord {
	return RunRecord{FormatVersion, s.Name, s.File, c.Name, c.Choices, c.Config, r}
}

// JSON encodes v indented, as records are written.
func JSON(v any) ([]byte, error) { return json.MarshalIndent(v, "", "  ") }
