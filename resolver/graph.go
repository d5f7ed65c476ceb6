package resolver

// Graph is the resolved dependency graph. The graph builder owns this type;
// callers use Roots (for the tree), Artifacts (the jars to retrieve) and
// Evicted.
type Graph struct {
	Roots     []*Node
	Artifacts []ArtifactRef
	Evicted   []Eviction
}

// Node is one module in the tree printed by `prebake resolve`.
type Node struct {
	Group, Artifact, Version string
	Children                 []*Node
	Evicted                  bool
}

// Eviction records a module version that lost a conflict.
type Eviction struct {
	Group, Artifact, Version string
	By                       string // the winning version
}
