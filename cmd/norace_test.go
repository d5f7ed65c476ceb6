//go:build !race

package cmd

const raceEnabled = false
