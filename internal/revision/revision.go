// Package revision orders revisions the way Spark's Ivy does.
package revision

import (
	"regexp"
	"slices"
	"strings"
)

// Ivy 2.5.1's LatestRevisionStrategy comparator (the "latest-revision"
// strategy of Spark's default LatestConflictManager). It is not Maven's
// ComparableVersion:
//   - a letter followed by a digit, or a digit followed by a letter, is
//     split ("1.0rc1" → "1.0.rc.1");
//   - parts are split on . _ - +;
//   - a number beats a word; numbers compare numerically;
//   - words compare with special meanings dev < (other words) < rc < final,
//     other words by Java String.compareTo;
//   - when one revision has more parts, the longer wins if its next part is
//     a number ("1.0.1" > "1.0"), else it loses ("1.0-beta" < "1.0").

var (
	letterDigit = regexp.MustCompile(`([a-zA-Z])(\d)`)
	digitLetter = regexp.MustCompile(`(\d)([a-zA-Z])`)
	revSplit    = regexp.MustCompile(`[._\-+]`)
	allDigits   = regexp.MustCompile(`^\d+$`)
)

var specialMeanings = map[string]int{"dev": -1, "rc": 1, "final": 2}

// javaSplit mimics String.split: trailing empty strings are removed.
func javaSplit(s string) []string {
	parts := revSplit.Split(s, -1)
	for len(parts) > 1 && parts[len(parts)-1] == "" {
		parts = parts[:len(parts)-1]
	}
	if len(parts) == 1 && parts[0] == "" && s != "" {
		return nil
	}
	return parts
}

func revParts(rev string) []string {
	rev = letterDigit.ReplaceAllString(rev, "$1.$2")
	rev = digitLetter.ReplaceAllString(rev, "$1.$2")
	return javaSplit(rev)
}

// Key is a revision parsed once for Compare: sorting a long list (a
// maven-metadata.xml may list 100,000 versions) compares keys, not
// strings parsed again at every comparison.
type Key struct {
	Rev   string
	parts []string
	num   []bool // parts[i] is all digits
}

// Parse parses rev for CompareKeys.
func Parse(rev string) Key {
	k := Key{Rev: rev, parts: revParts(rev)}
	k.num = make([]bool, len(k.parts))
	for i, p := range k.parts {
		k.num[i] = allDigits.MatchString(p)
	}
	return k
}

// Compare compares two revisions with Ivy's latest-revision
// strategy: <0 when a is older than b, 0 when equivalent, >0 when newer.
func Compare(a, b string) int { return CompareKeys(Parse(a), Parse(b)) }

// Sort sorts vs oldest first (Compare), stably, parsing each once.
func Sort(vs []string) {
	keys := make([]Key, len(vs))
	for i, v := range vs {
		keys[i] = Parse(v)
	}
	slices.SortStableFunc(keys, CompareKeys)
	for i, k := range keys {
		vs[i] = k.Rev
	}
}

// CompareKeys is Compare over parsed revisions.
func CompareKeys(a, b Key) int {
	p1, p2 := a.parts, b.parts
	i := 0
	for ; i < len(p1) && i < len(p2); i++ {
		x, y := p1[i], p2[i]
		if x == y {
			continue
		}
		n1, n2 := a.num[i], b.num[i]
		switch {
		case n1 && !n2:
			return 1
		case n2 && !n1:
			return -1
		case n1 && n2:
			return cmpDigits(x, y)
		}
		sm1, ok1 := specialMeanings[strings.ToLower(x)]
		sm2, ok2 := specialMeanings[strings.ToLower(y)]
		if ok1 {
			return cmpInt(sm1, sm2) // a missing sm2 counts as 0
		}
		if ok2 {
			return cmpInt(0, sm2)
		}
		return javaStringCompare(x, y)
	}
	if i < len(p1) {
		if a.num[i] {
			return 1
		}
		return -1
	}
	if i < len(p2) {
		if b.num[i] {
			return -1
		}
		return 1
	}
	return 0
}

// cmpDigits compares two strings of ASCII digits as numbers of any size
// (BigInteger's order, without allocating one).
func cmpDigits(x, y string) int {
	x, y = strings.TrimLeft(x, "0"), strings.TrimLeft(y, "0")
	if len(x) != len(y) {
		return cmpInt(len(x), len(y))
	}
	return strings.Compare(x, y)
}

func cmpInt(a, b int) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// javaStringCompare is String.compareTo: UTF-16 code unit order.
func javaStringCompare(a, b string) int {
	ua, ub := utf16Units(a), utf16Units(b)
	for i := 0; i < len(ua) && i < len(ub); i++ {
		if ua[i] != ub[i] {
			return cmpInt(int(ua[i]), int(ub[i]))
		}
	}
	return cmpInt(len(ua), len(ub))
}

func utf16Units(s string) []uint16 {
	out := make([]uint16, 0, len(s))
	for _, r := range s {
		if r >= 0x10000 {
			r -= 0x10000
			out = append(out, uint16(0xD800+(r>>10)), uint16(0xDC00+(r&0x3FF)))
			continue
		}
		out = append(out, uint16(r))
	}
	return out
}

// MajorMinor is v's line, its first two dot-separated parts ("3.5" of
// "3.5.9"), or v itself when it has fewer.
func MajorMinor(v string) string {
	p := strings.SplitN(v, ".", 3)
	if len(p) < 2 {
		return v
	}
	return p[0] + "." + p[1]
}
