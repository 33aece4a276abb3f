package teaching

import (
	"time"

	"github.com/ftlab/ftlab/internal/topology"
	"github.com/ftlab/ftlab/internal/yamldoc"
)

// File names inside a lab's directory.
const (
	LabFile     = "lab.yaml"
	HandoutFile = "README.md"
	AnswersFile = "answers.yaml"
	SolutionDir = "solution"
)

// Lab is a loaded and validated lab: lab.yaml with its check files
// resolved into typed checks.
type Lab struct {
	ID      string   `json:"id"`
	Title   string   `json:"title"`
	Summary string   `json:"summary,omitempty"`
	Goals   []string `json:"goals"`
	// Time is how long the lab takes a student, as the author says.
	Time string `json:"time,omitempty"`
	// References are the papers and documents the handout relies on.
	References []string `json:"references,omitempty"`

	Dir          string             `json:"dir"`      // labs/<id>
	File         string             `json:"file"`     // labs/<id>/lab.yaml
	TopologyFile string             `json:"topology"` // as found
	Topo         *topology.Topology `json:"-"`
	DataPlane    DataPlane          `json:"dataplane"`
	Variant      Variant            `json:"variant"`
	Questions    []*Question        `json:"questions"`
	Steps        []*Step            `json:"steps"`
	// Points is the most a student can score: every check's points.
	Points int `json:"points"`
}

// DataPlane is how `ftlab lab start` builds the lab's switches.
type DataPlane struct {
	Mode             string        `json:"mode"`   // linerate or shaped
	Policy           string        `json:"policy"` // one policy, or edge=..,agg=..
	ConvergenceDelay time.Duration `json:"convergence_delay_ns"`
}

// Step is one part of a lab: what the student does, optionally a scenario
// `ftlab lab run` runs for it, and the checks that say whether it is done.
type Step struct {
	ID    string `json:"id"`
	Title string `json:"title"`
	// Do lists the commands the student runs, as shown to them; {lab} is
	// the lab's name and {pick.NAME} a choice of the student's variant.
	Do         []string `json:"do,omitempty"`
	Run        *StepRun `json:"run,omitempty"`
	ChecksFile string   `json:"checks_file"`
	Checks     []*Check `json:"checks"`
	Points     int      `json:"points"`
}

// RunMode says how `ftlab lab run` runs a step's scenario.
type RunMode string

const (
	// RunMeasure runs the scenario with ftlab's runner on the lab (its
	// data plane is reprogrammed per cell) and keeps the results
	// directory: run.json, summary.json, report.md, with a fidelity
	// verdict. The lab's variant faults are applied again afterwards.
	RunMeasure RunMode = "measure"
	// RunTraffic sends the scenario's first run's messages through the
	// lab as it is (nothing reprogrammed, so hidden faults stay) and
	// keeps no results: the switches' counters are the measurement.
	RunTraffic RunMode = "traffic"
)

// StepRun is the scenario of a step.
type StepRun struct {
	Scenario string  `json:"scenario"` // path, as found
	Mode     RunMode `json:"mode"`
	// VariantSeed makes the scenario's seed the student's, so every
	// student gets a different workload and random faults.
	VariantSeed bool `json:"variant_seed"`
}

// Check is one declarative check of a step.
type Check struct {
	ID          string `json:"id"`
	Step        string `json:"step"`
	Kind        string `json:"kind"`
	Description string `json:"description"`
	Hint        string `json:"hint,omitempty"`
	// Priority 1 checks must pass for the step to be done; 2 and 3 are
	// worth points but do not hold a student back.
	Priority int `json:"priority"`
	Points   int `json:"points"`
	// Requires names ftlab features the check needs (capture, graph);
	// without them it is skipped, saying so.
	Requires []string `json:"requires,omitempty"`
	// Wait is how long a live check is retried until it passes (for
	// the fabric to converge).
	Wait time.Duration `json:"wait_ns,omitempty"`
	// Spec is the kind's own part, decoded by its Kind.
	Spec Spec `json:"-"`

	File string      `json:"file"`
	Pos  yamldoc.Pos `json:"-"`
}

// Question is one question of the answers file.
type Question struct {
	ID      string       `json:"id"`
	Step    string       `json:"step"`
	Text    string       `json:"text"`
	Type    QuestionType `json:"type"`
	Options []string     `json:"options,omitempty"` // choice
	Unit    string       `json:"unit,omitempty"`    // shown to students

	Pos yamldoc.Pos `json:"-"`
}

// QuestionType is what an answer must look like.
type QuestionType string

const (
	QNumber  QuestionType = "number"  // a number, compared with a tolerance
	QInteger QuestionType = "integer" // a whole number
	QText    QuestionType = "text"    // free text, compared case-insensitively or by pattern
	QChoice  QuestionType = "choice"  // one of the question's options
	QLinks   QuestionType = "links"   // a list of links (e0-0~a0-1, either end first)
	QNodes   QuestionType = "nodes"   // a list of node names
)

var questionTypes = []QuestionType{QNumber, QInteger, QText, QChoice, QLinks, QNodes}

// Variant is what a student's seed draws: hidden faults applied when the
// lab starts, and named picks (hosts, switches, links) the steps use.
type Variant struct {
	Faults []FaultRule `json:"faults,omitempty"`
	Picks  []PickRule  `json:"picks,omitempty"`
}

// FaultRule draws Count links of the given stages and impairs them.
type FaultRule struct {
	Kind      string   `json:"kind"` // corrupt or degrade
	Count     int      `json:"count"`
	Stages    []string `json:"stages"`
	Direction string   `json:"direction"` // up, down, both
	Drop      float64  `json:"drop,omitempty"`
	// RateFraction is a degraded link's rate as a fraction of its own.
	RateFraction float64 `json:"rate_fraction,omitempty"`
}

// PickRule draws one node or link for a name.
type PickRule struct {
	Name string `json:"name"`
	From string `json:"from"` // hosts, edges, aggs, cores, links
	// OtherPodThan names an earlier pick whose pod this one avoids.
	OtherPodThan string `json:"other_pod_than,omitempty"`
}

// Step returns the step with that id.
func (l *Lab) Step(id string) (*Step, int, bool) {
	for i, s := range l.Steps {
		if s.ID == id {
			return s, i, true
		}
	}
	return nil, -1, false
}

// Question returns the question with that id.
func (l *Lab) Question(id string) (*Question, bool) {
	for _, q := range l.Questions {
		if q.ID == id {
			return q, true
		}
	}
	return nil, false
}

// Checks returns every check of the lab in step order.
func (l *Lab) Checks() []*Check {
	var out []*Check
	for _, s := range l.Steps {
		out = append(out, s.Checks...)
	}
	return out
}
