//go:build race

package cmd

// raceEnabled: the race detector slows map and regexp work manyfold, so
// wall-time bounds are checked without it.
const raceEnabled = true
