package serve

import (
	"bytes"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"os"
	"path"
	"slices"
	"strings"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"

	"github.com/ftlab/ftlab/orchestrator/report"
)

// markdown renders report.md: GitHub's tables, and no raw HTML (a
// report's text is data, never markup that runs).
var markdown = goldmark.New(goldmark.WithExtensions(extension.GFM))

// results serves a results directory: every directory with a report.md
// as that report, rendered, with its plots; every file as it is.
func (s *Server) results(dir string) error {
	fi, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("results directory: %w", err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("results directory: %s is not a directory", dir)
	}
	root := os.DirFS(dir)
	if _, err := fs.Stat(root, report.ReportFile); err != nil {
		if _, rerr := fs.Stat(root, "run.json"); rerr == nil {
			return fmt.Errorf("%s has a run.json but no %s: rebuild it with ftlab report %s", dir, report.ReportFile, dir)
		}
		return fmt.Errorf("%s is not a results directory: it has no %s", dir, report.ReportFile)
	}
	files := http.FileServerFS(root)
	s.mux.HandleFunc("GET /", func(w http.ResponseWriter, r *http.Request) {
		rel := strings.Trim(path.Clean(r.URL.Path), "/")
		if rel == "" {
			rel = "."
		}
		if fi, err := fs.Stat(root, rel); err == nil && fi.IsDir() {
			if _, err := fs.Stat(root, path.Join(rel, report.ReportFile)); err == nil {
				if !strings.HasSuffix(r.URL.Path, "/") {
					// Relative plot links resolve against the directory.
					http.Redirect(w, r, r.URL.Path+"/", http.StatusMovedPermanently)
					return
				}
				s.reportPage(w, root, rel, dir)
				return
			}
		}
		files.ServeHTTP(w, r)
	})
	return nil
}

// reportPage renders the report.md of directory rel of root.
func (s *Server) reportPage(w http.ResponseWriter, root fs.FS, rel, dir string) {
	md, err := fs.ReadFile(root, path.Join(rel, report.ReportFile))
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	var body bytes.Buffer
	if err := markdown.Convert(md, &body); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	entries, err := fs.ReadDir(root, rel)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	var others []string
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() {
			name += "/"
		}
		if name != report.ReportFile {
			others = append(others, name)
		}
	}
	slices.Sort(others)
	title := dir
	if rel != "." {
		title = path.Join(dir, rel)
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	if err := pages.ExecuteTemplate(w, "report.html", struct {
		Title  string
		Report template.HTML
		Files  []string
		Up     bool
	}{title, template.HTML(body.String()), others, rel != "."}); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
	}
}
