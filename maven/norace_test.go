//go:build !race

package maven

const raceEnabled = false
