package testenv

import "sort"

// Environ returns m as an environment ("K=V", as os.Environ returns it),
// sorted by name: what tests pass to submit.LoadSubmission for a map of
// variables. nil or empty m is an empty environment.
func Environ(m map[string]string) []string {
	env := make([]string, 0, len(m))
	for k, v := range m {
		env = append(env, k+"="+v)
	}
	sort.Strings(env)
	return env
}
