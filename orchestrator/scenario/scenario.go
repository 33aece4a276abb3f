package scenario

import (
	"fmt"
	"os"
	"time"

	"github.com/ftlab/ftlab/hostagent/cc"
	"github.com/ftlab/ftlab/hostagent/scheme"
	"github.com/ftlab/ftlab/hostagent/transport"
	"github.com/ftlab/ftlab/internal/topology"
	"github.com/ftlab/ftlab/internal/yamldoc"
	"github.com/ftlab/ftlab/orchestrator/workload"
	"github.com/ftlab/ftlab/switchd"
)

// Scenario is a loaded, fully checked scenario file: the comparison
// matrix expanded into cells, each with its resolved run configuration and
// one Run per repetition (seed).
type Scenario struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	File        string `json:"file"`
	// Seeds are the seeds of the repetitions, in order; every cell runs
	// every seed, so cells are compared on the same workloads and faults.
	Seeds []uint64 `json:"seeds"`
	// Compare lists the compared fields and their values, in file order.
	Compare []Axis  `json:"compare,omitempty"`
	Cells   []*Cell `json:"cells"`
}

// Axis is one key of the compare block with the labels of its values.
type Axis struct {
	Key    string   `json:"key"`
	Values []string `json:"values"`
}

// Choice is the value a cell takes on one axis.
type Choice struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// Cell is one combination of compared values.
type Cell struct {
	// Name joins the choices: "policy=ofan,transport=rss+pfld"; "base"
	// when nothing is compared. It is safe as a directory name.
	Name    string   `json:"name"`
	Choices []Choice `json:"choices,omitempty"`
	Config  *Config  `json:"config"`
	Runs    []*Run   `json:"runs"`
}

// Config is the fully resolved configuration of a cell: every default
// filled in. Parameter blocks a cell does not use are nil.
type Config struct {
	Topology  TopologyInfo   `json:"topology"`
	Links     []LinkOverride `json:"links,omitempty"`
	DataPlane DataPlane      `json:"dataplane"`
	Policy    Policy         `json:"policy"`
	// The policies' parameter blocks (ofan, pofan, ar), those in use.
	switchd.PolicyParams
	Trimming bool `json:"trimming"`
	// ProbeHeadroom is the share of every port's buffer only the
	// transport's header-only probes may use (Ordered Chaos IV-B4; 0: off).
	ProbeHeadroom float64   `json:"probe_headroom,omitempty"`
	Transport     Transport `json:"transport"`
	// The transport's parameter blocks (rss, pfld, ...), those it takes.
	scheme.Params
	// CC is the congestion control, with its parameter blocks (dctcp,
	// mprdma, ...), those it takes.
	CC CCName `json:"cc"`
	CCBlocks
	Host     transport.HostParams `json:"host"`
	Workload workload.Spec        `json:"workload"`
	// Faults as written, defaults filled in; random selections are made
	// per run (Run.Faults).
	Faults []Fault `json:"faults"`
	// BaseRTT is the round trip of a full-size packet and its ACK over the
	// fabric's longest path when idle (see BaseRTT): the unit of
	// parameters written as "2rtt".
	BaseRTT time.Duration `json:"base_rtt_ns"`
	// MaxRTT is the fabric's maximum unloaded round trip, each hop at its
	// own link's rate (see MaxRTT): what host.rto: paper sets the
	// retransmission timeout from. BaseRTT when every link runs at one rate.
	MaxRTT time.Duration `json:"max_rtt_ns"`
	// Rate is how the fabric's link rates were set; nil when the topology's
	// own rates hold.
	Rate *RateInfo `json:"rate,omitempty"`
	// Regime is the cell's fabric in the ratios a transport sees (BDP in
	// packets, per subflow) at the topology's rates and as emulated, and
	// the time dilation between them.
	Regime Regime `json:"regime"`
	// Timeout stops a run that has not completed every message.
	Timeout time.Duration `json:"timeout_ns"`
	// ConvergenceDelay is how long switches keep routes through a link
	// that failed, before they reconverge around it.
	ConvergenceDelay time.Duration `json:"convergence_delay_ns"`

	topo   *topology.Topology
	fabric *workload.Fabric
}

// CCBlocks are the congestion controls' parameter blocks, embedded in
// Config so that run.json writes them at the top level like the
// transports' (an alias: Config embeds two set types both named Params).
type CCBlocks = cc.Params

// Topo returns the cell's resolved topology, with the scenario's link
// overrides applied. Callers must not modify it.
func (c *Config) Topo() *topology.Topology { return c.topo }

// Fabric returns the workload view of the cell's topology.
func (c *Config) Fabric() *workload.Fabric { return c.fabric }

// Wire returns how the cell's messages become packets: the host header
// and the payload that fits the smallest MTU.
func (c *Config) Wire() workload.Wire {
	w := workload.Wire{Header: int(c.Host.Header), Payload: c.fabric.MTU + ethernetHeader - int(c.Host.Header)}
	if t := c.Topo(); t != nil && len(t.Links) > 0 {
		// The bound takes one delay for every link: the shortest keeps
		// it a lower bound.
		w.Propagation = t.Links[0].Up.Delay
		for _, l := range t.Links {
			w.Propagation = min(w.Propagation, l.Up.Delay, l.Down.Delay)
		}
	}
	return w
}

// ethernetHeader is counted in Host.Header but not in the MTU, which is
// the largest IP packet.
const ethernetHeader = 14

// Run is one repetition of a cell.
type Run struct {
	Repetition int    `json:"repetition"` // from 0
	Seed       uint64 `json:"seed"`
	// Messages of the workload for this seed.
	Messages []workload.Message `json:"messages"`
	// Faults with their random selections made: Links and Switches name
	// exactly what is affected.
	Faults []Fault `json:"faults"`
	// Timeline is what the runner does, in time order.
	Timeline []Action `json:"timeline"`
	// Bound is the CCT lower bound; nil in linerate mode, where link
	// rates do not hold.
	Bound *workload.Bound `json:"cct_lower_bound,omitempty"`
}

// Options change how a scenario loads.
type Options struct {
	// Rate, if not 0, is the full link rate of every cell: the rate the
	// fastest link runs at, the others keeping their ratio to it. It takes
	// the place of the file's rate, auto included.
	Rate uint64
	// RateSource says where Rate came from, for run.json: "calibration
	// of 2026-11-30 on this machine", "--rate".
	RateSource string
}

// Load reads and checks a scenario file and everything it refers to (the
// topology file, a traffic matrix). It builds nothing. The error is a
// yamldoc.Errors listing every problem as file:line:col: field: message.
func Load(path string) (*Scenario, error) { return LoadWith(path, Options{}) }

// LoadWith is Load with options.
func LoadWith(path string, opt Options) (*Scenario, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("load scenario: %w", err)
	}
	return ParseWith(path, data, opt)
}

// Parse checks a scenario given as bytes; file names it in errors and is
// the base of relative paths (topology, matrix) in it.
func Parse(file string, data []byte) (*Scenario, error) { return ParseWith(file, data, Options{}) }

// ParseWith is Parse with options.
func ParseWith(file string, data []byte, opt Options) (*Scenario, error) {
	root, err := yamldoc.ParseDocument(file, data, emptyFile)
	if err != nil {
		return nil, err
	}
	return load(file, root, opt)
}

const emptyFile = "the file is empty; a scenario needs at least a topology and a workload"
