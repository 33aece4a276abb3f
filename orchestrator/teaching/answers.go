package teaching

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/ftlab/ftlab/internal/yamldoc"
)

// Answers is a student's answers file, decoded against the lab's
// questions. Problems (an unknown key, a number that is not one) are kept
// with their file:line:col and reported with the checks they affect; the
// rest of the file still counts.
type Answers struct {
	File     string
	Values   map[string]*Answer
	Problems yamldoc.Errors
}

// Answer is one answered question.
type Answer struct {
	Question string      `json:"question"`
	Raw      string      `json:"raw"`   // as written
	Value    any         `json:"value"` // float64, string or []string, by question type
	Pos      yamldoc.Pos `json:"-"`
}

// problemFor returns the answers file's problem about a question, if any.
func (a *Answers) problemFor(q string) *yamldoc.FieldError {
	if a == nil {
		return nil
	}
	for _, p := range a.Problems {
		if p.Field == q || strings.HasPrefix(p.Field, q+"[") {
			return p
		}
	}
	return nil
}

// doc is what expressions see as answers: question id -> value.
func (a *Answers) doc() map[string]any {
	out := map[string]any{}
	if a == nil {
		return out
	}
	for id, v := range a.Values {
		out[id] = v.Value
	}
	return out
}

// ReadAnswers reads and decodes an answers file. A missing file is no
// answers at all, not an error: every answer check then fails saying so.
func ReadAnswers(l *Lab, path string) (*Answers, error) {
	data, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return &Answers{File: path, Values: map[string]*Answer{}}, nil
	}
	if err != nil {
		return nil, err
	}
	return ParseAnswers(l, path, data), nil
}

// ParseAnswers decodes answers: a mapping from question id to value. Keys
// left empty are unanswered questions.
func ParseAnswers(l *Lab, file string, data []byte) *Answers {
	a := &Answers{File: file, Values: map[string]*Answer{}}
	root, err := yamldoc.ParseDocument(file, data, "")
	if err != nil {
		var es yamldoc.Errors
		if fe := asFieldErrors(err, &es); fe {
			a.Problems = es
		} else {
			a.Problems = yamldoc.Errors{{File: file, Msg: err.Error()}}
		}
		return a
	}
	ids := make([]string, len(l.Questions))
	for i, q := range l.Questions {
		ids[i] = q.ID
	}
	w := yamldoc.NewWalker(root)
	w.Fields(root, "a mapping from question id to your answer", ids, nil, func(key string, v *yaml.Node) {
		q, _ := l.Question(key)
		if yamldoc.IsNull(v) || (v.Kind == yaml.ScalarNode && strings.TrimSpace(v.Value) == "") {
			return // not answered yet
		}
		if ans, ok := decodeAnswer(w, l, q, v); ok {
			a.Values[key] = ans
		}
	})
	var pr yamldoc.Problems
	pr.AddAll("", w.Problems())
	if err := pr.Result(file); err != nil {
		a.Problems = err.(yamldoc.Errors)
	}
	return a
}

func asFieldErrors(err error, es *yamldoc.Errors) bool {
	e, ok := err.(yamldoc.Errors)
	if ok {
		*es = e
	}
	return ok
}

// decodeAnswer turns a value into the question's type.
func decodeAnswer(w *yamldoc.Walker, l *Lab, q *Question, v *yaml.Node) (*Answer, bool) {
	ans := &Answer{Question: q.ID, Pos: yamldoc.PosOf(v)}
	switch q.Type {
	case QNumber, QInteger:
		s, ok := w.Scalar(v, q.ID, "a number")
		if !ok {
			return nil, false
		}
		ans.Raw = s
		x, err := parseNumber(s)
		if err != nil {
			w.Problem(ans.Pos, q.ID, "expected a number, found %q", s)
			return nil, false
		}
		if q.Type == QInteger && x != float64(int64(x)) {
			w.Problem(ans.Pos, q.ID, "expected a whole number, found %q", s)
			return nil, false
		}
		ans.Value = x
	case QText:
		s, ok := w.Scalar(v, q.ID, "some text")
		if !ok {
			return nil, false
		}
		ans.Raw, ans.Value = s, strings.TrimSpace(s)
	case QChoice:
		s, ok := w.Scalar(v, q.ID, "one of "+strings.Join(q.Options, ", "))
		if !ok {
			return nil, false
		}
		ans.Raw = s
		i := slices.IndexFunc(q.Options, func(o string) bool { return strings.EqualFold(o, strings.TrimSpace(s)) })
		if i < 0 {
			w.Problem(ans.Pos, q.ID, "%q is not one of the options (%s)", s, strings.Join(q.Options, ", "))
			return nil, false
		}
		ans.Value = q.Options[i]
	case QLinks, QNodes:
		var items []string
		add := func(n *yaml.Node, field string) {
			s, ok := w.Scalar(n, field, "a name")
			if ok {
				items = append(items, strings.TrimSpace(s))
			}
		}
		if v.Kind == yaml.ScalarNode {
			add(v, q.ID)
		} else {
			w.Sequence(v, q.ID, "a list of names, such as [e0-0~a0-1]", func(i int, item *yaml.Node) {
				add(item, fmt.Sprintf("%s[%d]", q.ID, i))
			})
		}
		ans.Raw = strings.Join(items, ", ")
		var out []string
		for i, s := range items {
			name := s
			if q.Type == QLinks {
				c, ok := canonicalLink(l.Topo, s)
				if !ok {
					w.Problem(ans.Pos, fmt.Sprintf("%s[%d]", q.ID, i), "%q is not a link of this fabric (write it as e0-0~a0-1, either end first)", s)
					continue
				}
				name = c
			} else if _, ok := l.Topo.Node(s); !ok {
				w.Problem(ans.Pos, fmt.Sprintf("%s[%d]", q.ID, i), "%q is not a node of this fabric", s)
				continue
			}
			if !slices.Contains(out, name) {
				out = append(out, name)
			}
		}
		slices.Sort(out)
		ans.Value = out
	}
	return ans, true
}

// parseNumber reads 12, 1.5, 1e-3, 25% (0.25) or 1,234.
func parseNumber(s string) (float64, error) {
	s = strings.ReplaceAll(strings.TrimSpace(s), ",", "")
	if p, ok := strings.CutSuffix(s, "%"); ok {
		x, err := strconv.ParseFloat(strings.TrimSpace(p), 64)
		return x / 100, err
	}
	return strconv.ParseFloat(s, 64)
}
