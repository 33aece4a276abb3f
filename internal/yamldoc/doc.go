// Package yamldoc decodes YAML documents strictly and keeps positions, so
// that every problem in a file is reported at once as
// file:line:col: field: message: unknown fields with a guess at what was
// meant and the valid list, repeated keys, values of the wrong shape, and
// YAML syntax errors located at the line where the text stopped being
// valid.
//
// It is part of ftlab's ground floor: topology files, scenario files,
// parameter blocks and lab files all decode through it, and it imports
// nothing of ftlab.
//
// yaml.Decoder.KnownFields is not enough: it stops at the first unknown
// field and forgets positions, while a student needs every problem with
// its line.
package yamldoc
