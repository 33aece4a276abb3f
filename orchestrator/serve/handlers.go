package serve

import (
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"net/http"
	"time"

	"github.com/ftlab/ftlab/orchestrator/graph"
	"github.com/ftlab/ftlab/orchestrator/lab"
)

var pages = template.Must(template.ParseFS(webFS, "web/*.html"))

// labRoutes are the live page of a lab and what it reads.
func (s *Server) labRoutes() {
	s.live.control = s.opt.AllowControl
	s.mux.HandleFunc("GET /{$}", s.labPage)
	s.mux.HandleFunc("GET /api/graph.svg", s.graphSVG)
	s.mux.HandleFunc("GET /api/state", s.state)
	s.mux.HandleFunc("GET /api/events", s.events)
	s.mux.HandleFunc("POST /api/link", s.setLink)
}

func (s *Server) labPage(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	err := pages.ExecuteTemplate(w, "lab.html", struct {
		Lab, Token string
		Interval   time.Duration
		Control    bool
	}{s.opt.Lab, s.token, s.opt.Interval, s.opt.AllowControl})
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
	}
}

// graphSVG is the fabric as orchestrator/graph draws it; the page
// colours its links from the snapshots.
func (s *Server) graphSVG(w http.ResponseWriter, r *http.Request) {
	st, err := s.opt.Store.Get(s.opt.Lab)
	if err != nil {
		http.Error(w, err.Error(), http.StatusNotFound)
		return
	}
	g := graph.FromTopology(st.Topology)
	g.Title = fmt.Sprintf("lab %s: %s", st.Name, st.Topology)
	w.Header().Set("Content-Type", "image/svg+xml")
	if err := graph.SVG(w, g); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
	}
}

// state is the newest snapshot, waiting for the first one.
func (s *Server) state(w http.ResponseWriter, r *http.Request) {
	snap, changed := s.live.latest()
	if snap == nil {
		select {
		case <-changed:
			snap, _ = s.live.latest()
		case <-r.Context().Done():
			return
		}
	}
	writeJSON(w, http.StatusOK, snap)
}

// events streams every new snapshot as a server-sent event until the
// client goes.
func (s *Server) events(w http.ResponseWriter, r *http.Request) {
	flusher, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming unsupported", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	var seen uint64
	first := true
	for {
		snap, changed := s.live.latest()
		if snap != nil && (first || snap.Seq != seen) {
			data, err := json.Marshal(snap)
			if err != nil {
				return
			}
			if _, err := fmt.Fprintf(w, "id: %d\ndata: %s\n\n", snap.Seq, data); err != nil {
				return
			}
			flusher.Flush()
			seen, first = snap.Seq, false
		}
		select {
		case <-changed:
		case <-r.Context().Done():
			return
		}
	}
}

// linkRequest is POST /api/link: fail (up false) or repair the link
// between two nodes.
type linkRequest struct {
	A  string `json:"a"`
	B  string `json:"b"`
	Up bool   `json:"up"`
}

func (s *Server) setLink(w http.ResponseWriter, r *http.Request) {
	if code, err := s.checkControl(r); err != nil {
		writeJSON(w, code, map[string]string{"error": err.Error()})
		return
	}
	var req linkRequest
	dec := json.NewDecoder(io.LimitReader(r.Body, 4096))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "want {\"a\": NODE, \"b\": NODE, \"up\": BOOL}: " + err.Error()})
		return
	}
	name, err := s.opt.Store.SetLink(r.Context(), s.opt.Lab, req.A, req.B, req.Up)
	if err != nil {
		code := http.StatusBadRequest
		if st, gerr := s.opt.Store.Get(s.opt.Lab); gerr != nil || st.Phase != lab.PhaseUp {
			code, err = http.StatusConflict, fmt.Errorf("%w: %v", errLabGone, err)
		}
		writeJSON(w, code, map[string]string{"error": err.Error()})
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"link": name, "up": req.Up})
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}
