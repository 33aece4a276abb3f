package scenario

import (
	"errors"
	"strings"
	"testing"

	"github.com/ftlab/ftlab/internal/yamldoc"
	"github.com/google/go-cmp/cmp"
)

func TestErrors(t *testing.T) {
	k4 := "topology: {kind: fattree, k: 4}\n"
	perm := "workload: {kind: permutation}\n"
	tests := []struct {
		name  string
		src   string
		files map[string]string
		want  []string
	}{
		{
			name: "unknown field",
			src:  k4 + perm + "transprot: rss\n",
			want: []string{`s.yaml:3:1: transprot: unknown field "transprot"; did you mean "transport"? (valid: name, description, topology, links, rate, dataplane, policy, ofan, pofan, ar, trimming, probe_headroom, transport, rss, pfld, rack, psnpath, plb, reps, cc, dctcp, mprdma, nscc, swift, host, workload, faults, repetitions, seed, seeds, timeout, convergence_delay, compare)`},
		},
		{
			name: "misplaced field",
			src:  k4 + perm + "sigma: 8\n",
			want: []string{`s.yaml:3:1: sigma: unknown field "sigma"; RSS parameters go under rss: (valid: name, description, topology, links, rate, dataplane, policy, ofan, pofan, ar, trimming, probe_headroom, transport, rss, pfld, rack, psnpath, plb, reps, cc, dctcp, mprdma, nscc, swift, host, workload, faults, repetitions, seed, seeds, timeout, convergence_delay, compare)`},
		},
		{
			name: "unknown policy",
			src:  k4 + perm + "policy: ofna\n",
			want: []string{`s.yaml:3:9: policy: unknown policy "ofna"; did you mean "ofan"? (valid: ecmp, ofan, pofan, rr, random, ar)`},
		},
		{
			name: "unknown policy in a layer",
			src:  k4 + perm + "policy: {edge: ofan, agg: wrr}\n",
			want: []string{`s.yaml:3:27: policy.agg: unknown policy "wrr"; did you mean "rr"? (valid: ecmp, ofan, pofan, rr, random, ar)`},
		},
		{
			name: "policy for core switches",
			src:  k4 + perm + "policy: {edge: ofan, core: ofan}\n",
			want: []string{`s.yaml:3:22: policy.core: core switches have one way down to every destination and choose no uplinks; give a policy for edge and agg`},
		},
		{
			name: "policy layer of the other kind",
			src:  "topology: {kind: leafspine, leaves: 2, spines: 2, hosts_per_leaf: 2}\n" + perm + "policy: {edge: ofan}\n",
			want: []string{`s.yaml:3:10: policy.edge: a leafspine has no edge layer (valid: leaf)`},
		},
		{
			name: "unknown scheme",
			src:  k4 + perm + "transport: rss+pfd\n",
			want: []string{`s.yaml:3:12: transport: unknown transport "rss+pfd"; did you mean "rss+pfld"? (valid: ecmp, rps, rss, rss+pfld, rss+rack, psnpath, gapnack, reps, plb)`},
		},
		{
			name: "unknown data plane",
			src:  k4 + perm + "dataplane: fast\n",
			want: []string{`s.yaml:3:12: dataplane: unknown data-plane mode "fast" (valid: shaped, linerate)`},
		},
		{
			name: "bad units",
			src:  k4 + "workload: {kind: permutation, size: 1Mb}\ntransport: rss\nrss: {tau: 10, jitter: 1h}\nhost: {pacing: 10MBps}\n",
			want: []string{
				`s.yaml:2:37: workload.size: cannot parse "1Mb": unit "Mb" ends in a lowercase b, which usually means bits; sizes are in bytes: write MiB (1048576 bytes) or MB (1000000 bytes)`,
				`s.yaml:4:12: rss.tau: "10" has no unit, e.g. 10ms (valid: ns, us, ms, s, m, h); or a multiple of the base RTT such as 2rtt`,
				`s.yaml:4:24: rss.jitter: jitter 1h0m0s must be shorter than tau 2.56992ms, or deadlines could pass before they are set`,
				`s.yaml:5:16: host.pacing: cannot parse "10MBps": unit "MBps" has a capital B, which means bytes; rates are in bits per second (valid: bit, Kbit, Mbit, Gbit, Tbit, bps, Kbps, Mbps, Gbps); or "line"`,
			},
		},
		{
			name: "parameter out of range",
			src:  k4 + perm + "transport: rss+pfld\nrss: {sigma: 12, metric: rtt}\npfld: {bitmap_bits: 96, periodic: never}\npsnpath: {remove_threshold: 0.99}\n",
			want: []string{
				`s.yaml:4:14: rss.sigma: 12 is not a power of two; sigma must be one (1, 2, 4, 8, ...)`,
				`s.yaml:4:26: rss.metric: unknown metric "rtt" (valid: mean-rtt, max-rtt, ecn-fraction)`,
				`s.yaml:5:21: pfld.bitmap_bits: 96 is not a multiple of 64; bitmap_bits must be one`,
				`s.yaml:5:35: pfld.periodic: expected a whole number, found "never"; or "off"`,
				`s.yaml:6:29: psnpath.remove_threshold: remove_threshold 0.99 (loss rates above 0.2%) must be below explore_threshold 0.75 (5%): a degrading path is first explored, then removed`,
			},
		},
		{
			name: "window beyond the pfld bitmap",
			src:  k4 + perm + "transport: rss+pfld\nhost: {window: 1MiB}\n",
			want: []string{`s.yaml:4:8: host.window: a window of 1MiB is 737 packets of 1424 bytes, more than the 512 PSNs pfld.bitmap_bits tracks; lower host.window or raise pfld.bitmap_bits`},
		},
		{
			name: "unused block",
			src:  k4 + perm + "transport: ecmp\nrss: {sigma: 8}\n",
			want: []string{`s.yaml:4:1: rss: no cell uses it: it configures the rss, rss+pfld and rss+rack transports, and the scenario runs transport ecmp; remove it, or compare a transport that uses it`},
		},
		{
			name: "unknown congestion control",
			src:  k4 + perm + "cc: mpdrma\n",
			want: []string{`s.yaml:3:5: cc: unknown congestion control "mpdrma"; did you mean "mprdma"? (valid: none, dctcp, mprdma, nscc, swift)`},
		},
		{
			name: "a block of another congestion control",
			src:  k4 + perm + "cc: dctcp\nswift: {ai: 2}\n",
			want: []string{`s.yaml:4:1: swift: no cell uses it: it configures the swift congestion control, and the scenario runs congestion control dctcp; remove it, or compare a congestion control that uses it`},
		},
		{
			name: "a cc block compared while no cell runs it",
			src:  k4 + perm + "compare: {cc: [none, dctcp], nscc.target: [1rtt, 2rtt]}\n",
			want: []string{`s.yaml:3:30: compare.nscc.target: no cell uses it: it configures the nscc congestion control, and the scenario runs congestion controls none, dctcp; remove it, or compare a congestion control that uses it`},
		},
		{
			name: "a bad cc parameter",
			src:  k4 + perm + "cc: nscc\nnscc: {gamma: 2, initial_window: 3}\n",
			want: []string{
				`s.yaml:4:15: nscc.gamma: 2 is out of range; gamma must be above 0 and at most 1`,
				`s.yaml:4:34: nscc.initial_window: initial_window 3 is above max_window 1.5`,
			},
		},
		{
			name: "cc is compared whole",
			src:  k4 + perm + "compare: {cc.ai: [1, 2]}\n",
			want: []string{`s.yaml:3:11: compare.cc.ai: cc has no parts to compare; it is a single value`},
		},
		{
			name: "unused psnpath block",
			src:  k4 + perm + "transport: rss\npsnpath: {k: 8}\n",
			want: []string{`s.yaml:4:1: psnpath: no cell uses it: it configures the psnpath and gapnack transports, and the scenario runs transport rss; remove it, or compare a transport that uses it`},
		},
		{
			name: "an unknown psnpath parameter lists every one the scheme takes",
			src:  k4 + perm + "transport: gapnack\npsnpath: {max_wlk: 2}\n",
			want: []string{`s.yaml:4:11: psnpath.max_wlk: unknown field "max_wlk"; did you mean "max_walk"? (valid: k, beta, explore_threshold, remove_threshold, interval, min_samples, bitmap_bits, max_walk, base_ev, no_path_manager, no_fpsn, no_fast_retx, keep_path_on_rto)`},
		},
		{
			name: "missing topology and workload",
			src:  "transport: rss\n",
			want: []string{
				`s.yaml:1:1: topology: missing; give a topology file such as topologies/fattree-k4.yaml, or an inline topology such as {kind: fattree, k: 4}`,
				`s.yaml:1:1: workload: missing; give a workload: a mapping with kind (permutation, all-to-all, incast, tornado, ring-allreduce, all-to-all-v, cm) and its options`,
			},
		},
		{
			name: "inline topology problems keep their positions",
			src:  "topology:\n  kind: fattree\n  k: 5\n" + perm,
			want: []string{`s.yaml:3:6: topology.k: 5 is odd; k must be an even number from 4 to 16`},
		},
		{
			name:  "topology file not found",
			src:   "topology: topologies/k4.yaml\n" + perm,
			files: map[string]string{"go.mod": "module x\n"},
			want:  []string{`s.yaml:1:11: topology: cannot find topologies/k4.yaml (looked for topologies/k4.yaml)`},
		},
		{
			name:  "topology file with problems",
			src:   "topology: topologies/bad.yaml\n" + perm,
			files: map[string]string{"go.mod": "", "topologies/bad.yaml": "kind: fattree\nk: 3\n"},
			want: []string{
				`s.yaml:1:11: topology: topologies/bad.yaml has problems, listed with their own file name`,
				`topologies/bad.yaml:2:4: k: 3 is out of range; k must be an even number from 4 to 16`,
			},
		},
		{
			name: "link override problems",
			src:  k4 + perm + "links:\n  - between: [e0-0, c0-0]\n    rate: 10Mbit\n",
			want: []string{`s.yaml:4:14: links[0].between: e0-0 and c0-0 are not linked; e0-0 links only to h0-0-0, h0-0-1, a0-0, a0-1`},
		},
		{
			name: "workload problems",
			src:  k4 + "workload:\n  kind: incast\n  senders: 16\n  inter_pod: true\n  receiver: h9-9-9\n",
			want: []string{
				`s.yaml:4:12: workload.senders: 16 is too many: with 16 hosts there are at most 15 senders besides the receiver`,
				`s.yaml:5:3: workload.inter_pod: only for permutation workloads; this one is incast`,
				`s.yaml:6:13: workload.receiver: no host named "h9-9-9"`,
			},
		},
		{
			name: "unknown workload",
			src:  k4 + "workload: {kind: shuffle}\n",
			want: []string{`s.yaml:2:18: workload.kind: unknown workload "shuffle" (valid: permutation, all-to-all, incast, tornado, ring-allreduce, all-to-all-v, cm)`},
		},
		{
			name: "workload hosts that are not hosts",
			src:  k4 + "workload: {kind: permutation, hosts: [h0-0-0, a0-1, x]}\n",
			want: []string{
				`s.yaml:2:47: workload.hosts[1]: a0-1 is an aggregation switch, not a host; this fattree k=4 has hosts h0-0-0..h3-1-1, edge switches e0-0..e3-1, aggregation switches a0-0..a3-1, core switches c0-0..c1-1`,
				`s.yaml:2:53: workload.hosts[2]: no host named "x"; this fattree k=4 has hosts h0-0-0..h3-1-1, edge switches e0-0..e3-1, aggregation switches a0-0..a3-1, core switches c0-0..c1-1`,
			},
		},
		{
			name:  "traffic matrix of the wrong size",
			src:   k4 + "workload: {kind: all-to-all-v, matrix: tm.csv}\n",
			files: map[string]string{"tm.csv": "0,1\n1,0\n"},
			want:  []string{`s.yaml:2:40: workload.matrix: tm.csv is 2x2 but there are 16 participants (the topology's hosts); the matrix must be 16x16, or list the hosts its rows stand for in hosts`},
		},
		{
			name:  "traffic matrix with bad cells",
			src:   k4 + "workload: {kind: all-to-all-v, matrix: tm.csv, hosts: [h0-0-0, h1-0-0]}\n",
			files: map[string]string{"tm.csv": "0,1x\n1,0\n"},
			want: []string{
				`s.yaml:2:40: workload.matrix: tm.csv has problems, listed with their own file name`,
				`tm.csv:1:3: [0][1]: cannot parse "1x": unknown unit "x" (valid: B, KB, MB, GB, KiB, MiB, GiB)`,
			},
		},
		{
			name: "fault naming a missing link",
			src:  k4 + perm + "faults:\n  - kind: corrupt\n    drop: 1e-3\n    links: [e0-0~a0-1, e0-0~a9-1, e0-0~c0-0, e0-0]\n",
			want: []string{
				`s.yaml:6:24: faults[0].links[1]: no link "e0-0~a9-1": no node named "a9-1"; this fattree k=4 has hosts h0-0-0..h3-1-1, edge switches e0-0..e3-1, aggregation switches a0-0..a3-1, core switches c0-0..c1-1`,
				`s.yaml:6:35: faults[0].links[2]: no link "e0-0~c0-0": e0-0 and c0-0 are not linked; e0-0 links only to h0-0-0, h0-0-1, a0-0, a0-1`,
				`s.yaml:6:46: faults[0].links[3]: "e0-0" is not a link name; links are named after their two ends, lower tier first, e.g. e0-0~a0-1`,
			},
		},
		{
			name: "fault naming a missing switch",
			src:  k4 + perm + "faults:\n  - kind: switch-down\n    switches: [a0-1, a7-0, h0-0-0]\n",
			want: []string{
				`s.yaml:5:22: faults[0].switches[1]: no switch named "a7-0"; this fattree k=4 has edge switches e0-0..e3-1, aggregation switches a0-0..a3-1, core switches c0-0..c1-1`,
				`s.yaml:5:28: faults[0].switches[2]: h0-0-0 is a host; to take its link down use kind: down with links: [h0-0-0~e0-0]`,
			},
		},
		{
			name: "fault times",
			src:  k4 + perm + "timeout: 1s\nfaults:\n  - {kind: down, at: -5ms, links: [e0-0~a0-1]}\n  - {kind: down, at: 2s, links: [e0-0~a0-0]}\n  - {kind: flap, at: 10ms, for: 50ms, every: 20ms, links: [e1-0~a1-0]}\n",
			want: []string{
				`s.yaml:5:22: faults[0].at: "-5ms" is negative; times count from the start of the run`,
				`s.yaml:6:22: faults[1].at: 2s is not before the run's timeout 1s; the fault would never happen`,
				`s.yaml:7:46: faults[2].every: 20ms is not longer than for 50ms: the links must come up before they go down again`,
			},
		},
		{
			name: "fault kind and options",
			src:  k4 + perm + "faults:\n  - {kind: unplug, links: [e0-0~a0-1]}\n  - {kind: down, drop: 0.1, links: [e0-0~a0-1]}\n  - {kind: corrupt, random: 2}\n  - {kind: degrade, rate: 150%, stage: edge-agg}\n  - {kind: corrupt, drop: 2, stage: core}\n",
			want: []string{
				`s.yaml:4:12: faults[0].kind: unknown fault kind "unplug" (valid: corrupt, down, flap, degrade, switch-down)`,
				`s.yaml:5:18: faults[1].drop: only for corrupt faults; this one is down`,
				`s.yaml:6:5: faults[2].drop: missing; a corrupt fault needs drop: the probability that a packet is lost, e.g. 1e-3`,
				`s.yaml:7:27: faults[3].rate: 150% is out of range; a degraded link runs at more than 0% and less than 100% of its rate`,
				`s.yaml:8:27: faults[4].drop: 2 is out of range; drop is a probability above 0 and at most 1 (or 100%)`,
				`s.yaml:8:37: faults[4].stage: "core" is not a stage of a fattree (valid: host-edge, edge-agg, agg-core)`,
			},
		},
		{
			name: "fault selecting nothing or too much",
			src:  k4 + perm + "faults:\n  - {kind: down}\n  - {kind: down, random: 33}\n  - {kind: switch-down, layer: core}\n",
			want: []string{
				`s.yaml:4:5: faults[0]: names no links; give links: [e0-0~a0-1], stage: agg-core, or random: N (N random links above the hosts)`,
				`s.yaml:5:26: faults[1].random: 33 is more than the 32 links to pick from (every link above the hosts)`,
				`s.yaml:6:32: faults[2].layer: would fail every core switch; add random: N to fail N of them`,
			},
		},
		{
			name: "fault with empty selections",
			src:  k4 + perm + "faults:\n  - {kind: down, links: []}\n  - {kind: switch-down, switches: []}\n",
			want: []string{
				"s.yaml:4:25: faults[0].links: empty; list the links, e.g. [e0-0~a0-1]",
				"s.yaml:5:35: faults[1].switches: empty; list the switches, e.g. [a0-1]",
			},
		},
		{
			name: "overlapping faults",
			src:  k4 + perm + "faults:\n  - {kind: corrupt, drop: 1e-3, links: [e0-0~a0-1]}\n  - {kind: corrupt, drop: 1e-2, direction: down, at: 10ms, for: 10ms, links: [a0-1~c1-0, e0-0~a0-1]}\n  - {kind: switch-down, at: 5ms, for: 5ms, switches: [a0-1]}\n  - {kind: down, at: 9ms, links: [e0-0~a0-1]}\n",
			want: []string{
				`s.yaml:5:90: faults[1].links[1]: link e0-0~a0-1 is already changed by faults[0] from 0s to the end of the run; faults must not change the same link at the same time`,
				`s.yaml:7:35: faults[3].links[0]: link e0-0~a0-1 is already changed by faults[2] from 5ms to 10ms; faults must not change the same link at the same time`,
			},
		},
		{
			name: "seeds",
			src:  k4 + perm + "repetitions: 3\nseed: 4\nseeds: [1, 2, 1, x]\n",
			want: []string{
				`s.yaml:3:14: repetitions: 3, but seeds lists 2; leave repetitions out, it follows from seeds`,
				`s.yaml:5:1: seeds: give either seed (the first of consecutive seeds) or seeds (a list), not both`,
				`s.yaml:5:15: seeds[2]: seed 1 is listed twice (also seeds[0]); repetitions with one seed are identical`,
				`s.yaml:5:18: seeds[3]: expected a whole number from 0 to 18446744073709551615, found "x"`,
			},
		},
		{
			name: "compare key unknown",
			src:  k4 + perm + "compare:\n  polcy: [ecmp, ofan]\n  rss.sgima: [4, 8]\n  seed: [1, 2]\n  workload.size.min: [1, 2]\n",
			want: []string{
				`s.yaml:4:3: compare.polcy: unknown field "polcy"; did you mean "policy"? (valid: topology, links, rate, dataplane, policy, ofan, pofan, ar, trimming, probe_headroom, transport, rss, pfld, rack, psnpath, plb, reps, cc, dctcp, mprdma, nscc, swift, host, workload, faults, timeout, convergence_delay)`,
				`s.yaml:5:3: compare.rss.sgima: unknown field "sgima" of rss; did you mean "sigma"? (valid: sigma, tau, jitter, metric, no_feedback, keep_path_on_rto)`,
				`s.yaml:6:3: compare.seed: seed cannot be compared: every cell runs every seed, so cells are compared on the same workload and faults`,
				`s.yaml:7:3: compare.workload.size.min: "workload.size.min" is not a field path; write a field (policy), a field of a block (rss.sigma, workload.size) or of a fault (faults[0].drop)`,
			},
		},
		{
			name: "compare values",
			src:  k4 + perm + "compare:\n  transport: [rss, rss+pfd]\n  policy: []\n  trimming: [true, true]\n  dataplane: shaped\n",
			want: []string{
				`s.yaml:4:20: compare.transport[1]: unknown transport "rss+pfd"; did you mean "rss+pfld"? (valid: ecmp, rps, rss, rss+pfld, rss+rack, psnpath, gapnack, reps, plb)`,
				`s.yaml:5:11: compare.policy: empty; list at least one alternative`,
				`s.yaml:6:20: compare.trimming[1]: the same as compare.trimming[0]; every alternative must differ`,
				`s.yaml:7:14: compare.dataplane: expected a list of alternatives, e.g. [ecmp, ofan], found "shaped"`,
			},
		},
		{
			name: "compared field also set",
			src:  k4 + "workload: {kind: permutation, size: 1MiB}\ncompare:\n  workload.size: [64KiB, 1MiB]\n",
			want: []string{`s.yaml:2:31: workload.size: also compared (compare.workload.size, line 4); the compared values replace it, so remove it here`},
		},
		{
			name: "compare keys overlapping",
			src:  k4 + "compare:\n  workload: [{kind: tornado}, {kind: permutation}]\n  workload.size: [64KiB, 1MiB]\n",
			want: []string{`s.yaml:4:3: compare.workload.size: overlaps compare.workload; compare a field either whole or by its parts`},
		},
		{
			name: "compare paths into faults",
			src:  k4 + perm + "faults:\n  - {kind: corrupt, links: [e0-0~a0-1]}\ncompare:\n  faults[0].drop: [1e-3, 5]\n  faults[1].drop: [1e-3]\n  policy.edge: [ofan]\n",
			want: []string{
				`s.yaml:6:26: compare.faults[0].drop[1]: 5 is out of range; drop is a probability above 0 and at most 1 (or 100%)`,
				`s.yaml:7:3: compare.faults[1].drop: there is no faults[1]; the file has 1 fault`,
				`s.yaml:8:3: compare.policy.edge: policy has no parts to compare; compare whole policies: policy: [ecmp, ofan, {edge: ofan, agg: ecmp}]`,
			},
		},
		{
			name: "problems in some cells only",
			src:  "workload: {kind: permutation}\nfaults:\n  - {kind: down, links: [e0-0~a0-1]}\ncompare:\n  topology: [{kind: fattree, k: 4}, {name: ls, kind: leafspine, leaves: 2, spines: 2, hosts_per_leaf: 2}]\n",
			want: []string{`s.yaml:3:26: faults[0].links[0]: no link "e0-0~a0-1": no node named "e0-0"; this leafspine 2x2 with 2 hosts per leaf has hosts h0-0..h1-1, leaves l0..l1, spines s0..s1 (in cell topology=ls)`},
		},
		{
			name: "problem inside a compared inline topology",
			src:  perm + "compare:\n  topology: [{kind: fattree, k: 4}, {kind: fattree, k: 5}]\n",
			want: []string{`s.yaml:3:56: compare.topology[1].k: 5 is odd; k must be an even number from 4 to 16`},
		},
		{
			name: "compare empty",
			src:  k4 + perm + "compare:\n",
			want: []string{`s.yaml:3:9: compare: empty; give the fields to compare with their alternatives, e.g. {policy: [ecmp, ofan]}, or leave compare out`},
		},
		{
			name: "not a scenario",
			src:  "- kind: fattree\n",
			want: []string{`s.yaml:1:1: expected a scenario: a mapping with topology, workload and optional settings, found a list`},
		},
		{
			name: "probe headroom",
			src:  k4 + perm + "probe_headroom: 60%\n",
			want: []string{`s.yaml:3:17: probe_headroom: 0.6 is outside 0..0.5 of the buffer (a headroom is a small reserve: the paper needs under 0.2%)`},
		},
		{
			name: "probe headroom in line-rate mode",
			src:  k4 + perm + "dataplane: linerate\nprobe_headroom: 1%\n",
			want: []string{`s.yaml:4:17: probe_headroom: needs dataplane: shaped: line-rate switches have no queues`},
		},
		{
			name: "probe headroom leaving no room for a frame",
			src:  "topology: {kind: fattree, k: 4, links: {buffer: 2KiB, ecn: off}}\n" + perm + "probe_headroom: 40%\n",
			want: []string{`s.yaml:3:17: probe_headroom: leaves 1229B of the 2KiB buffer of h0-0-0 -> e0-0 to data, less than a 1514-byte frame`},
		},
		{
			name: "empty",
			src:  "# nothing yet\n",
			want: []string{`s.yaml: the file is empty; a scenario needs at least a topology and a workload`},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parse(t, tc.src, tc.files)
			if err == nil {
				t.Fatalf("no error, want:\n%s", strings.Join(tc.want, "\n"))
			}
			var es yamldoc.Errors
			if !errors.As(err, &es) {
				t.Fatalf("error %T is not a yamldoc.Errors: %v", err, err)
			}
			if diff := cmp.Diff(tc.want, strings.Split(err.Error(), "\n")); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
		})
	}
}
