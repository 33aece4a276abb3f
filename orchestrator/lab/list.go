package lab

import "time"

// Summary is one lab as `ftlab list` shows it.
type Summary struct {
	Name     string    `json:"name"`
	Phase    Phase     `json:"phase"` // "unreadable" when its record cannot be read
	Topology string    `json:"topology,omitempty"`
	Created  time.Time `json:"created,omitzero"`
	// DataPlane is the data plane and mode, e.g. "bpf shaped".
	DataPlane   string   `json:"dataplane,omitempty"`
	FailedLinks []string `json:"failed_links,omitempty"`
	Impairments int      `json:"impairments,omitempty"`
	Error       string   `json:"error,omitempty"`
}

// Summaries lists the store's labs, sorted by name; a lab whose record
// cannot be read is listed as unreadable, with why.
func (s *Store) Summaries() ([]Summary, error) {
	names, err := s.List()
	if err != nil {
		return nil, err
	}
	out := []Summary{}
	for _, n := range names {
		st, err := s.Read(n)
		if err != nil {
			out = append(out, Summary{Name: n, Phase: "unreadable", Error: err.Error()})
			continue
		}
		sum := Summary{Name: n, Phase: st.Phase, Created: st.Created, FailedLinks: FailedLinks(st), Impairments: len(st.Impairments),
			DataPlane: string(st.DataPlane.DataPlane)}
		if st.DataPlane.Mode != "" {
			sum.DataPlane += " " + st.DataPlane.Mode
		}
		if st.Topology != nil {
			sum.Topology = st.Topology.Name
		}
		out = append(out, sum)
	}
	return out, nil
}
