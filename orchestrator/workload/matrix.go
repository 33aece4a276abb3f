package workload

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/ftlab/ftlab/internal/units"
	"github.com/ftlab/ftlab/internal/yamldoc"
	"gopkg.in/yaml.v3"
)

// Matrix is a traffic matrix: Bytes[i][j] is what participant i sends to
// participant j. The diagonal stays on the host (as expert traffic to a
// GPU's own experts does) and produces no message.
type Matrix struct {
	File  string     `json:"file"` // where it was read from
	Bytes [][]uint64 `json:"bytes"`
}

// ReadMatrix reads a traffic matrix file; see ParseMatrix.
func ReadMatrix(path string) (*Matrix, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return ParseMatrix(path, data)
}

// ParseMatrix parses a square matrix of byte counts. The format follows
// the file name: ".csv" is one row per line, values separated by commas,
// blank lines and lines starting with # ignored; ".yaml" or ".yml" is a
// list of rows, each a list of values. Values are sizes as in
// units.ParseSize: a plain number is bytes, "1MiB" works too.
// Problems are a yamldoc.Errors naming file, line and column, with
// fields "[row][column]" counted from 0.
func ParseMatrix(file string, data []byte) (*Matrix, error) {
	var (
		rows [][]uint64
		pos  []yamldoc.Pos // where each row starts
		pr   yamldoc.Problems
	)
	switch ext := strings.ToLower(filepath.Ext(file)); ext {
	case ".csv":
		rows, pos = parseCSV(data, &pr)
	case ".yaml", ".yml":
		rows, pos = parseYAMLMatrix(file, data, &pr)
	default:
		return nil, yamldoc.Errors{{File: file, Msg: fmt.Sprintf("unknown traffic matrix format %q; name the file .csv or .yaml", ext)}}
	}
	if pr.Len() == 0 {
		switch {
		case len(rows) == 0:
			pr.Add(yamldoc.Pos{}, "", "the traffic matrix is empty")
		default:
			for i, row := range rows {
				if len(row) != len(rows) {
					pr.Add(pos[i], fmt.Sprintf("[%d]", i), "row %d has %d values but the matrix has %d rows; a traffic matrix is square (one row and one column per host)",
						i, len(row), len(rows))
				}
			}
		}
	}
	if err := pr.Result(file); err != nil {
		return nil, err
	}
	return &Matrix{File: file, Bytes: rows}, nil
}

func parseCell(text string, at yamldoc.Pos, r, c int, pr *yamldoc.Problems) uint64 {
	v, err := units.ParseSize(text)
	if err != nil {
		pr.Add(at, fmt.Sprintf("[%d][%d]", r, c), "%v", err)
	}
	return v
}

func parseCSV(data []byte, pr *yamldoc.Problems) ([][]uint64, []yamldoc.Pos) {
	var rows [][]uint64
	var pos []yamldoc.Pos
	for ln, line := range bytes.Split(data, []byte("\n")) {
		text := strings.TrimRight(string(line), "\r")
		if t := strings.TrimSpace(text); t == "" || strings.HasPrefix(t, "#") {
			continue
		}
		r := len(rows)
		var row []uint64
		col := 1
		for c, cell := range strings.Split(text, ",") {
			lead := len(cell) - len(strings.TrimLeft(cell, " \t"))
			row = append(row, parseCell(cell, yamldoc.Pos{Line: ln + 1, Column: col + lead}, r, c, pr))
			col += len(cell) + 1
		}
		rows = append(rows, row)
		pos = append(pos, yamldoc.Pos{Line: ln + 1, Column: 1})
	}
	return rows, pos
}

func parseYAMLMatrix(file string, data []byte, pr *yamldoc.Problems) ([][]uint64, []yamldoc.Pos) {
	root, err := yamldoc.ParseDocument(file, data, "the traffic matrix is empty")
	if err != nil {
		pr.AddError(yamldoc.Pos{}, "", err)
		return nil, nil
	}
	w := yamldoc.NewWalker(root)
	var rows [][]uint64
	var pos []yamldoc.Pos
	w.Sequence(root, "", "a list of rows, each a list of byte counts, e.g. [0, 1MiB, 2MiB]", func(r int, item *yaml.Node) {
		var row []uint64
		w.Sequence(item, fmt.Sprintf("[%d]", r), "a row: a list of byte counts, e.g. [0, 1MiB, 2MiB]", func(c int, cell *yaml.Node) {
			field := fmt.Sprintf("[%d][%d]", r, c)
			text, ok := w.Scalar(cell, field, "a byte count such as 1048576 or 1MiB")
			if ok {
				row = append(row, parseCell(text, yamldoc.PosOf(cell), r, c, pr))
			} else {
				row = append(row, 0)
			}
		})
		rows = append(rows, row)
		pos = append(pos, yamldoc.PosOf(item))
	})
	if yamldoc.Deref(root).Kind != yaml.SequenceNode {
		rows = nil
	}
	pr.AddAll("", w.Problems())
	return rows, pos
}

// allToAllV sends Bytes[i][j] from participant i to participant j, row by
// row, skipping the diagonal and zeros.
func allToAllV(hosts []Host, m *Matrix) []Message {
	var msgs []Message
	for i, row := range m.Bytes {
		for j, b := range row {
			if i == j || b == 0 {
				continue
			}
			msgs = append(msgs, Message{ID: len(msgs), Src: hosts[i].Name, Dst: hosts[j].Name, Bytes: b})
		}
	}
	return msgs
}

// Total returns the bytes each participant sends (row sums) and receives
// (column sums), leaving out the diagonal.
func (m *Matrix) Total() (sent, received []uint64) {
	n := len(m.Bytes)
	sent, received = make([]uint64, n), make([]uint64, n)
	for i, row := range m.Bytes {
		for j, b := range row {
			if i != j {
				sent[i] += b
				received[j] += b
			}
		}
	}
	return sent, received
}
