package scenario

import (
	"strings"
	"testing"
)

// TestWorkloadCM: a cm workload reads its .cm file next to the scenario
// and runs its connections; problems in the file are reported with the
// file's own lines, and the scenario's problems with the scenario's.
func TestWorkloadCM(t *testing.T) {
	k4 := "topology: {kind: fattree, k: 4}\n"
	good := "Nodes 16\nConnections 2\nTriggers 1\n0->5 start 2.5 size 1000 send_done_trigger 1\n5->0 trigger 1 size 500\ntrigger id 1 barrier count 1\n"
	s := mustParse(t, k4+"workload: {kind: cm, file: t.cm}\n", map[string]string{"t.cm": good})
	msgs, err := s.Cells[0].Config.Workload.Generate(s.Cells[0].Config.Fabric(), 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 2 || msgs[0].Src != "h0-0-0" || msgs[0].Dst != "h1-0-1" || msgs[0].Start.Nanoseconds() != 2500 || len(msgs[1].After) != 1 {
		t.Errorf("messages %+v", msgs)
	}

	for _, tc := range []struct {
		name, src string
		files     map[string]string
		want      []string
	}{
		{"missing file", k4 + "workload: {kind: cm}\n", nil,
			[]string{"s.yaml:2:11: workload.file: missing; a cm workload needs an htsim connection matrix file"}},
		{"no such file", k4 + "workload: {kind: cm, file: nope.cm}\n", nil,
			[]string{"s.yaml:2:28: workload.file: cannot find nope.cm"}},
		{"bad lines", k4 + "workload: {kind: cm, file: t.cm}\n", map[string]string{"t.cm": "Nodes 16\nConnections 1\n0->5 start 0 size lots\n"},
			[]string{"s.yaml:2:28: workload.file: t.cm has problems, listed with their own file name",
				`t.cm:3:19: size: "lots" is not a number of bytes`}},
		{"size is not for cm", k4 + "workload: {kind: cm, file: t.cm, size: 1MiB}\n", map[string]string{"t.cm": good},
			[]string{"workload.size: only for permutation"}},
		{"more nodes than hosts", k4 + "workload: {kind: cm, file: t.cm, hosts: [h0-0-0, h1-0-0]}\n", map[string]string{"t.cm": good},
			[]string{"workload.file: t.cm:4: 0->5, but the workload maps htsim nodes 0..1 to its 2 hosts"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parse(t, tc.src, tc.files)
			if err == nil {
				t.Fatal("parsed")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("errors\n%v\nlack %q", err, w)
				}
			}
		})
	}
}
