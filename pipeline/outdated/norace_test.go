//go:build !race

package outdated

const raceEnabled = false
