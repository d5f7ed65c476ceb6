//go:build race

package outdated

// raceEnabled: the race detector slows map and regexp work manyfold, so
// the wall-time bound of the hostile listing is not checked under it.
const raceEnabled = true
