package native

import (
	"sort"
	"unicode/utf16"
)

// Spark builds the driver's volumes from a Scala immutable Map of the
// spark.kubernetes.driver.volumes.* keys (getAllWithPrefix(...).toMap) and
// takes each (type, name) in the order its first key comes out of that
// map; the on-demand PVC indices follow that order. With more than four
// keys the map is a hash trie whose iteration order depends only on the
// keys' hashes: Scala 2.12's HashTrieMap (Spark 3.5) and Scala 2.13's CHAMP
// HashMap (Spark 4.x) differ. scalaMapOrder reproduces both.

// javaStringHash is java.lang.String.hashCode (over UTF-16 code units).
func javaStringHash(s string) int32 {
	var h int32
	for _, c := range utf16.Encode([]rune(s)) {
		h = 31*h + int32(c)
	}
	return h
}

// scalaImprove is scala.collection.Hashing.improve (also 2.12's
// HashMap.improve): the hash a Scala immutable HashMap keys on.
func scalaImprove(hcode int32) uint32 {
	h := hcode + ^(hcode << 9)
	h ^= int32(uint32(h) >> 14)
	h += h << 4
	h ^= int32(uint32(h) >> 10)
	return uint32(h)
}

// scalaMapOrder is the iteration order of a Scala immutable Map built
// from keys: insertion order up to four keys (Map1..Map4), else the hash
// trie's order (scala213: CHAMP, each node's own entries before its
// sub-nodes; else 2.12's trie, by the hash's 5-bit digits from the lowest).
// Keys with equal hashes keep their given order.
func scalaMapOrder(keys []string, scala213 bool) []string {
	out := append([]string{}, keys...)
	if len(out) <= 4 {
		return out
	}
	hashes := map[string]uint32{}
	for _, k := range out {
		hashes[k] = scalaImprove(javaStringHash(k))
	}
	if !scala213 {
		sort.SliceStable(out, func(i, j int) bool {
			return digitsLess(hashes[out[i]], hashes[out[j]])
		})
		return out
	}
	var res []string
	champ(out, hashes, 0, &res)
	return res
}

// digitsLess orders hashes by their 5-bit digits, lowest digit first.
func digitsLess(a, b uint32) bool {
	for shift := uint(0); shift < 35; shift += 5 {
		da, db := (a>>shift)&31, (b>>shift)&31
		if da != db {
			return da < db
		}
	}
	return false
}

// champ appends keys (all equal in the hash digits below shift) in CHAMP
// order: the keys alone in their digit at this level first, by digit,
// then the sub-nodes, by digit, each in the same order.
func champ(keys []string, hashes map[string]uint32, shift uint, out *[]string) {
	if shift >= 35 || len(keys) == 1 {
		*out = append(*out, keys...) // a collision node keeps insertion order
		return
	}
	var buckets [32][]string
	for _, k := range keys {
		d := (hashes[k] >> shift) & 31
		buckets[d] = append(buckets[d], k)
	}
	for _, b := range buckets {
		if len(b) == 1 {
			*out = append(*out, b[0])
		}
	}
	for _, b := range buckets {
		if len(b) > 1 {
			champ(b, hashes, shift+5, out)
		}
	}
}
