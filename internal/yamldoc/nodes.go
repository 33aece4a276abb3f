package yamldoc

import (
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// Deref follows YAML aliases to the node they stand for.
func Deref(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	return n
}

// PosOf is the position of a node (following aliases).
func PosOf(n *yaml.Node) Pos {
	n = Deref(n)
	return Pos{Line: n.Line, Column: n.Column}
}

// IsNull reports whether n is an explicit or implicit null ("key:" alone).
func IsNull(n *yaml.Node) bool {
	n = Deref(n)
	return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null"
}

// Describe names what a node is, for "expected X, found Y" messages.
func Describe(n *yaml.Node) string {
	n = Deref(n)
	switch {
	case n.Kind == yaml.MappingNode:
		return "a mapping (key: value lines)"
	case n.Kind == yaml.SequenceNode:
		return "a list"
	case IsNull(n):
		return "nothing"
	}
	return strconv.Quote(n.Value)
}

// Closest returns the candidate nearest to a misspelled word, or "" when
// none is close enough to be a plausible typo.
func Closest(word string, candidates []string) string {
	limit := 2
	if len(word) <= 3 {
		limit = 1 // "ecm" is a typo of "ecn", "mt" is not a typo of "k"
	}
	best, bestDist := "", limit+1
	for _, c := range candidates {
		if d := editDistance(strings.ToLower(word), c); d < bestDist {
			best, bestDist = c, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance between a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
