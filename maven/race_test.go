//go:build race

package maven

// raceEnabled: the race detector slows the XML decoder some twentyfold;
// the corpus and hostile-input tests then read a sample.
const raceEnabled = true
