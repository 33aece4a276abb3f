package scenario

import (
	"errors"

	"github.com/ftlab/ftlab/internal/yamldoc"
)

// Validation is one file as `ftlab validate --json` reports it.
type Validation struct {
	File     string    `json:"file"`
	OK       bool      `json:"ok"`
	Summary  string    `json:"summary,omitempty"` // what the file describes, when it is valid
	Problems []Problem `json:"problems,omitempty"`
}

// Problem is one problem of a file, located as precisely as it allows (0
// when unknown).
type Problem struct {
	File    string `json:"file,omitempty"`
	Line    int    `json:"line,omitempty"`
	Column  int    `json:"column,omitempty"`
	Field   string `json:"field,omitempty"`
	Message string `json:"message"`
}

// Validate checks a topology or scenario file, as ValidateFile does, and
// returns every problem as data.
func Validate(path string) Validation {
	summary, err := ValidateFile(path)
	v := Validation{File: path, OK: err == nil, Summary: summary}
	if err == nil {
		return v
	}
	var es yamldoc.Errors
	if !errors.As(err, &es) {
		v.Problems = []Problem{{Message: err.Error()}} // it names the file
		return v
	}
	for _, e := range es {
		v.Problems = append(v.Problems, Problem{File: e.File, Line: e.Line, Column: e.Column, Field: e.Field, Message: e.Msg})
	}
	return v
}
