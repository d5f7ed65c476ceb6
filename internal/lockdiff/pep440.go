package lockdiff

import (
	"cmp"
	"regexp"
	"strconv"
	"strings"
)

// pep440Parts splits a normalized PEP 440 version (what a lock records:
// lock.Check refuses any other).
var pep440Parts = regexp.MustCompile(`^(?:([0-9]+)!)?([0-9]+(?:\.[0-9]+)*)(?:(a|b|rc)([0-9]+))?(?:\.post([0-9]+))?(?:\.dev([0-9]+))?(?:\+([a-z0-9.]+))?$`)

// pep440Key is a version's sort key, as PyPA's packaging orders versions:
// epoch, release (trailing zeros ignored), pre-release (a dev release of a
// final version sorts before its pre-releases; a final after them),
// post-release, dev release, local label.
type pep440Key struct {
	epoch   int
	release []int
	pre     [2]int // {phase, n}: phase -2 dev-only, 0 a, 1 b, 2 rc, 3 none
	post    int    // -1 none
	dev     int    // MaxInt none
	local   string
}

func parsePEP440(v string) (pep440Key, bool) {
	m := pep440Parts.FindStringSubmatch(v)
	if m == nil {
		return pep440Key{}, false
	}
	num := func(s string, none int) int {
		if s == "" {
			return none
		}
		n, err := strconv.Atoi(s)
		if err != nil {
			return none
		}
		return n
	}
	k := pep440Key{epoch: num(m[1], 0), post: num(m[5], -1), dev: num(m[6], int(^uint(0)>>1)), local: m[7]}
	for _, p := range strings.Split(m[2], ".") {
		k.release = append(k.release, num(p, 0))
	}
	for len(k.release) > 1 && k.release[len(k.release)-1] == 0 {
		k.release = k.release[:len(k.release)-1]
	}
	switch {
	case m[3] != "":
		k.pre = [2]int{map[string]int{"a": 0, "b": 1, "rc": 2}[m[3]], num(m[4], 0)}
	case m[5] == "" && m[6] != "":
		k.pre = [2]int{-2, 0}
	default:
		k.pre = [2]int{3, 0}
	}
	return k, true
}

// comparePEP440 orders two PEP 440 versions; a version that does not
// parse falls back to string order.
func comparePEP440(a, b string) int {
	ka, oka := parsePEP440(a)
	kb, okb := parsePEP440(b)
	if !oka || !okb {
		return strings.Compare(a, b)
	}
	if c := cmp.Compare(ka.epoch, kb.epoch); c != 0 {
		return c
	}
	for i := range max(len(ka.release), len(kb.release)) {
		x, y := 0, 0
		if i < len(ka.release) {
			x = ka.release[i]
		}
		if i < len(kb.release) {
			y = kb.release[i]
		}
		if c := cmp.Compare(x, y); c != 0 {
			return c
		}
	}
	if c := cmp.Compare(ka.pre[0], kb.pre[0]); c != 0 {
		return c
	}
	if c := cmp.Compare(ka.pre[1], kb.pre[1]); c != 0 {
		return c
	}
	if c := cmp.Compare(ka.post, kb.post); c != 0 {
		return c
	}
	if c := cmp.Compare(ka.dev, kb.dev); c != 0 {
		return c
	}
	return strings.Compare(ka.local, kb.local)
}
