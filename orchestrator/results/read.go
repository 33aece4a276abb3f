package results

import (
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// Set is a results directory's raw content: run.json and every run's rows,
// in run.json's order.
type Set struct {
	Meta *Meta
	Runs []Rows
}

// ByCell groups the runs by cell, each cell's in run order.
func (s *Set) ByCell() map[string][]Rows {
	by := map[string][]Rows{}
	for _, r := range s.Runs {
		by[r.Cell] = append(by[r.Cell], r)
	}
	return by
}

// Read reads a results directory's raw files: run.json, flows.csv,
// links.csv and subflows.csv (which results from before it have none of).
// Rows of runs run.json does not list are left out.
func Read(dir string) (*Set, error) {
	path := filepath.Join(dir, RunFile)
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var meta Meta
	if err := json.Unmarshal(data, &meta); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if meta.Scenario == nil {
		return nil, fmt.Errorf("%s has no scenario", path)
	}
	flows, err := readCSV(filepath.Join(dir, FlowsFile), flowsHeader, parseFlowRow, flowsHeaderV1)
	if err != nil {
		return nil, err
	}
	links, err := readCSV(filepath.Join(dir, LinksFile), linksHeader, parseLinkRow)
	if err != nil {
		return nil, err
	}
	subflows, err := ReadSubflows(dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	type key struct {
		cell string
		rep  int
	}
	set := &Set{Meta: &meta, Runs: make([]Rows, len(meta.Runs))}
	index := map[key]*Rows{}
	for i, r := range meta.Runs {
		rows := Rows{Cell: r.Cell, Repetition: r.Repetition, Status: r.Status, CCT: r.CCT}
		if r.Bound != nil {
			rows.Bound = r.Bound.CCT
		}
		set.Runs[i] = rows
		index[key{r.Cell, r.Repetition}] = &set.Runs[i]
	}
	for _, f := range flows {
		if rr, ok := index[key{f.Cell, f.Repetition}]; ok {
			rr.Flows = append(rr.Flows, f)
		}
	}
	for _, l := range links {
		if rr, ok := index[key{l.Cell, l.Repetition}]; ok {
			rr.Links = append(rr.Links, l)
		}
	}
	for _, s := range subflows {
		if rr, ok := index[key{s.Cell, s.Repetition}]; ok {
			rr.Subflows = append(rr.Subflows, s)
		}
	}
	return set, nil
}

// ReadSubflows reads a results directory's subflows.csv.
func ReadSubflows(dir string) ([]SubflowRow, error) {
	return readCSV(filepath.Join(dir, SubflowsFile), subflowsHeader, parseSubflowRow)
}

// readCSV reads a result CSV, checks its header and parses every row,
// naming the file and line of the first bad one. A file with one of the
// older headers, each a prefix of header, is read with the columns it
// lacks as "0".
func readCSV[T any](path string, header []string, parse func([]string) (T, error), older ...[]string) ([]T, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(recs) == 0 {
		return nil, fmt.Errorf("%s: not an ftlab results file (no header)", path)
	}
	pad := -1
	for _, h := range append([][]string{header}, older...) {
		if fmt.Sprint(recs[0]) == fmt.Sprint(h) {
			pad = len(header) - len(h)
		}
	}
	if pad < 0 {
		return nil, fmt.Errorf("%s: not an ftlab results file (unexpected header)", path)
	}
	out := make([]T, 0, len(recs)-1)
	for i, rec := range recs[1:] {
		for range pad {
			rec = append(rec, "0")
		}
		row, err := parse(rec)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, i+2, err)
		}
		out = append(out, row)
	}
	return out, nil
}

// fieldReader parses one CSV record field by field, keeping the first
// error with the column it happened in.
type fieldReader struct {
	rec    []string
	header []string
	i      int
	err    error
}

func (r *fieldReader) next() string {
	if r.i >= len(r.rec) {
		if r.err == nil {
			r.err = fmt.Errorf("too few columns: %d", len(r.rec))
		}
		return ""
	}
	r.i++
	return r.rec[r.i-1]
}

func (r *fieldReader) fail(err error) {
	if r.err == nil {
		r.err = fmt.Errorf("column %s: %w", r.header[r.i-1], err)
	}
}

func (r *fieldReader) str() string { return r.next() }
func (r *fieldReader) int() int {
	v, err := strconv.Atoi(r.next())
	if err != nil {
		r.fail(err)
	}
	return v
}
func (r *fieldReader) u64() uint64 {
	v, err := strconv.ParseUint(r.next(), 10, 64)
	if err != nil {
		r.fail(err)
	}
	return v
}
func (r *fieldReader) uint(bits int) uint64 {
	v, err := strconv.ParseUint(r.next(), 10, bits)
	if err != nil {
		r.fail(err)
	}
	return v
}
func (r *fieldReader) f64() float64 {
	v, err := strconv.ParseFloat(r.next(), 64)
	if err != nil {
		r.fail(err)
	}
	return v
}
func (r *fieldReader) dur() time.Duration {
	v, err := strconv.ParseInt(r.next(), 10, 64)
	if err != nil {
		r.fail(err)
	}
	return time.Duration(v)
}
func (r *fieldReader) bool() bool {
	v, err := strconv.ParseBool(r.next())
	if err != nil {
		r.fail(err)
	}
	return v
}

func parseFlowRow(rec []string) (FlowRow, error) {
	r := &fieldReader{rec: rec, header: flowsHeader}
	f := FlowRow{Cell: r.str(), Repetition: r.int(), Seed: r.u64(), ID: r.int(), Src: r.str(), Dst: r.str(),
		Bytes: r.u64(), Step: r.int(), Released: r.dur(), Done: r.dur(), FCT: r.dur(), Delivered: r.bool(),
		Verified: r.bool(), Packets: r.int(), RetxNeeded: r.int(), RetxSpurious: r.int(), NACKs: r.int(),
		ProbesTail: r.int(), ProbesSectionEnd: r.int(), ProbesPeriodic: r.int(), ProbesRTX: r.int(), RTOs: r.int(),
		Reroutes: r.int(), Losses: r.int(), LossDetectP50: r.dur(), Retx: r.int(), RetxUseful: r.int()}
	return f, r.err
}

func parseLinkRow(rec []string) (LinkRow, error) {
	r := &fieldReader{rec: rec, header: linksHeader}
	l := LinkRow{Cell: r.str(), Repetition: r.int(), Switch: r.str(), Port: r.int(), Ifname: r.str(), Link: r.str(),
		Direction: r.str(), Stage: r.str(), RateBps: r.u64(), BufferBytes: r.u64(), TxPackets: r.u64(), TxBytes: r.u64(),
		Utilization: r.f64(), RxPackets: r.u64(), DropCorrupt: r.u64(), DropBuffer: r.u64(), DropLinkDown: r.u64(),
		DropNoRoute: r.u64(), DropTTL: r.u64(), DropMalformed: r.u64(), DropNonIPv4: r.u64(), Trimmed: r.u64(),
		CEMarked: r.u64(), MaxBacklog: r.u64(), MeanBacklog: r.f64(), QdiscDrops: r.str(),
		Dequeues: r.str(), BusyGaps: r.str(), BusyRateBps: r.str()}
	return l, r.err
}

func parseSubflowRow(rec []string) (SubflowRow, error) {
	r := &fieldReader{rec: rec, header: subflowsHeader}
	s := SubflowRow{Cell: r.str(), Repetition: r.int(), Host: r.str(), Peer: r.str(), Flow: uint32(r.uint(32)),
		Subflow: r.int(), Packets: r.int(), At: r.dur(), EV: uint16(r.uint(16)), Reason: r.str(), Uplink: r.int(),
		Uplinks: r.int()}
	return s, r.err
}
