package workload

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseMatrix(t *testing.T) {
	tests := []struct {
		name, file, src string
		want            [][]uint64
		err             string
	}{
		{
			name: "csv", file: "tm.csv",
			src:  "# bytes from row host to column host\n0, 1MiB, 2048\n\n3,0,4\r\n5 ,6,0\n",
			want: [][]uint64{{0, 1 << 20, 2048}, {3, 0, 4}, {5, 6, 0}},
		},
		{
			name: "yaml", file: "tm.yaml",
			src:  "- [0, 1MiB]\n- [2KiB, 0]\n",
			want: [][]uint64{{0, 1 << 20}, {2048, 0}},
		},
		{
			name: "csv bad cells", file: "tm.csv",
			src: "0,1Mb,2\n3,0,-4\n5,6,0\n",
			err: "tm.csv:1:3: [0][1]: cannot parse \"1Mb\": unit \"Mb\" ends in a lowercase b, which usually means bits; sizes are in bytes: write MiB (1048576 bytes) or MB (1000000 bytes)\n" +
				"tm.csv:2:5: [1][2]: cannot parse \"-4\": sizes cannot be negative",
		},
		{
			name: "csv not square", file: "tm.csv",
			src: "0,1,2\n3,0\n",
			err: "tm.csv:1:1: [0]: row 0 has 3 values but the matrix has 2 rows; a traffic matrix is square (one row and one column per host)",
		},
		{
			name: "yaml shape", file: "tm.yml",
			src: "- [0, 1]\n- {a: 1}\n",
			err: "tm.yml:2:3: [1]: expected a row: a list of byte counts, e.g. [0, 1MiB, 2MiB], found a mapping (key: value lines)",
		},
		{name: "empty", file: "tm.csv", src: "# nothing\n", err: "tm.csv: the traffic matrix is empty"},
		{name: "format", file: "tm.txt", src: "1", err: `tm.txt: unknown traffic matrix format ".txt"; name the file .csv or .yaml`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, err := ParseMatrix(tc.file, []byte(tc.src))
			gotErr := ""
			if err != nil {
				gotErr = err.Error()
			}
			if diff := cmp.Diff(tc.err, gotErr); diff != "" {
				t.Fatalf("error (-want +got):\n%s", diff)
			}
			if err == nil {
				if diff := cmp.Diff(tc.want, m.Bytes); diff != "" {
					t.Errorf("matrix (-want +got):\n%s", diff)
				}
			}
		})
	}
}
