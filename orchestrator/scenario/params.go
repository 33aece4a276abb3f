package scenario

import (
	"slices"

	"github.com/ftlab/ftlab/hostagent/cc"
	"github.com/ftlab/ftlab/hostagent/scheme"
	"github.com/ftlab/ftlab/hostagent/transport"
	"github.com/ftlab/ftlab/internal/params"
	"github.com/ftlab/ftlab/switchd"
)

// Parameter blocks are declared by the engines that read them, with their
// defaults and documentation (package internal/params): the switch
// policies' in switchd (PolicyBlocks), the transports' in hostagent/scheme
// (Blocks), the congestion controls' in hostagent/cc (Blocks), the host
// block in hostagent/transport. A scenario file writes
// each as a top-level mapping ("rss: {sigma: 8}"); the decoder, the
// compare block and docs/scenarios.md take them from here.

// blocks lists every parameter block in file order.
var blocks = slices.Concat(switchd.PolicyBlocks, scheme.Blocks, cc.Blocks, []params.Block{transport.HostBlock})

func blockFor(key string) (params.Block, bool) { return params.Find(blocks, key) }

// usedBlocks are the keys of the blocks a cell's policy, transport and
// congestion control read; host is always read.
func usedBlocks(cfg *Config) map[string]bool {
	used := map[string]bool{transport.HostBlock.Key: true}
	for _, name := range cfg.Policy {
		if p, err := switchd.LookupPolicy(string(name)); err == nil {
			for _, b := range p.Blocks {
				used[b] = true
			}
		}
	}
	if t, err := scheme.Lookup(string(cfg.Transport)); err == nil {
		for _, b := range t.Blocks {
			used[b] = true
		}
	}
	if a, err := cc.Lookup(string(cfg.CC)); err == nil {
		for _, b := range a.Blocks {
			used[b] = true
		}
	}
	return used
}

// Block kinds: who reads a parameter block.
const (
	kindPolicy    = "policy"
	kindTransport = "transport"
	kindCC        = "congestion control"
)

// blockKind says who reads a block.
func blockKind(key string) string {
	switch {
	case isBlockOf(switchd.PolicyBlocks, key):
		return kindPolicy
	case isBlockOf(cc.Blocks, key):
		return kindCC
	}
	return kindTransport
}

func isBlockOf(bs []params.Block, key string) bool {
	_, ok := params.Find(bs, key)
	return ok
}

// setBlock stores a decoded block (a pointer to its struct) in the cell's
// configuration.
func setBlock(cfg *Config, key string, v any) {
	switch {
	case key == transport.HostBlock.Key:
		cfg.Host = *v.(*transport.HostParams)
	case blockKind(key) == kindPolicy:
		params.Put(&cfg.PolicyParams, key, v)
	case blockKind(key) == kindCC:
		params.Put(&cfg.CCBlocks, key, v)
	default:
		params.Put(&cfg.Params, key, v)
	}
}
