package teaching

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/ftlab/ftlab/internal/yamldoc"
)

// KeyFile is a lab's solution key: the instructor's answers, with the ones
// that depend on the student's variant or measurements written as
// "=EXPR", computed like a check's value. It is for instructors (a
// reference workspace) and the labs' tests; students never need it.
var KeyFile = filepath.Join(SolutionDir, AnswersFile)

// Solve computes the solution key's answers to the given questions (all
// when ids is empty) for the student and runs in env; with a live lab,
// expressions may read stats and lab too.
func Solve(ctx context.Context, env *Env, ids []string) (map[string]any, error) {
	path := filepath.Join(env.Lab.Dir, KeyFile)
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var key map[string]any
	if err := yaml.Unmarshal(data, &key); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	m := exprEnv(env, nil)
	if env.Live != nil {
		if m["stats"], err = env.Live.Stats(ctx); err != nil {
			return nil, err
		}
		if m["lab"], err = env.Live.LabDoc(ctx); err != nil {
			return nil, err
		}
	}
	out := map[string]any{}
	for _, q := range env.Lab.Questions {
		if len(ids) > 0 && !contains(ids, q.ID) {
			continue
		}
		v, ok := key[q.ID]
		if !ok {
			return nil, fmt.Errorf("%s: no answer to %s", path, q.ID)
		}
		if s, isStr := v.(string); isStr && strings.HasPrefix(s, "=") {
			e, err := compileExpr(strings.TrimPrefix(s, "="), false, env.Lab.Topo)
			if err != nil {
				return nil, fmt.Errorf("%s: %s: %v", path, q.ID, flatten(err))
			}
			if v, err = e.run(m); err != nil {
				return nil, fmt.Errorf("%s: %s: %w", path, q.ID, err)
			}
		}
		out[q.ID] = v
	}
	return out, nil
}

// validateKey checks a lab's solution key, when it has one: it answers
// every question and nothing else, and its expressions compile.
func (l *Lab) validateKey(pr *yamldoc.Problems) {
	path := filepath.Join(l.Dir, KeyFile)
	data, err := os.ReadFile(path)
	if err != nil {
		return // the key is the instructor's, not needed to run the lab
	}
	root, err := yamldoc.ParseDocument(path, data, "")
	if err != nil {
		pr.AddError(yamldoc.Pos{}, "", err)
		return
	}
	ids := make([]string, len(l.Questions))
	for i, q := range l.Questions {
		ids[i] = q.ID
	}
	w := yamldoc.NewWalker(root)
	seen := map[string]bool{}
	w.Fields(root, "a mapping from question id to answer", ids, nil, func(key string, v *yaml.Node) {
		seen[key] = true
		if v.Kind == yaml.ScalarNode && strings.HasPrefix(v.Value, "=") {
			if _, err := compileExpr(strings.TrimPrefix(v.Value, "="), false, l.Topo); err != nil {
				w.Problem(yamldoc.PosOf(v), key, "expression: %v", flatten(err))
			}
		}
	})
	for _, id := range ids {
		if !seen[id] {
			w.Problem(w.Pos(), id, "the solution key does not answer question %s", id)
		}
	}
	for _, p := range w.Problems() {
		c := *p
		c.File = path
		pr.AddAll("", []*yamldoc.FieldError{&c})
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// FillAnswers writes values into an answers file in place: each key's
// line gets the value, its comment kept; keys not given are left as they
// are.
func FillAnswers(path string, values map[string]any) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	text := string(data)
	for id, v := range values {
		re := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(id) + `:[^#\n]*`)
		if !re.MatchString(text) {
			text += fmt.Sprintf("%s: %s\n", id, yamlValue(v))
			continue
		}
		line := fmt.Sprintf("%s: %s ", id, yamlValue(v))
		text = re.ReplaceAllLiteralString(text, line)
	}
	return writeAtomic(path, []byte(text))
}

// yamlValue writes a value on one line: numbers plainly, strings quoted
// when YAML would read them otherwise, lists in brackets.
func yamlValue(v any) string {
	if f, ok := toFloat(v); ok {
		return strconv.FormatFloat(f, 'g', -1, 64)
	}
	if list, ok := v.([]any); ok {
		parts := make([]string, len(list))
		for i, x := range list {
			parts[i] = yamlValue(x)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	}
	if list, ok := v.([]string); ok {
		parts := make([]string, len(list))
		for i, x := range list {
			parts[i] = yamlValue(x)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	}
	s := fmt.Sprint(v)
	out, err := yaml.Marshal(s)
	if err != nil {
		return strconv.Quote(s)
	}
	return strings.TrimSpace(string(out))
}
