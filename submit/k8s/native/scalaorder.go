package native

import (
	"fmt"
	"math/bits"
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
// trie's order (scalaHashOrder of the keys' String.hashCode).
func scalaMapOrder(keys []string, scala213 bool) []string {
	if len(keys) <= 4 {
		return append([]string{}, keys...)
	}
	hashes := make([]int32, len(keys))
	for i, k := range keys {
		hashes[i] = javaStringHash(k)
	}
	out := make([]string, 0, len(keys))
	for _, i := range scalaHashOrder(hashes, scala213) {
		out = append(out, keys[i])
	}
	return out
}

// scalaHashOrder is the order (as indices into hashes, the elements' ##)
// in which a Scala immutable HashMap or HashSet of more than four elements
// iterates them: scala213, CHAMP (each node's own entries before its
// sub-nodes); else 2.12's trie, by the improved hash's 5-bit digits from
// the lowest. Elements with equal hashes keep their given order.
func scalaHashOrder(hashes []int32, scala213 bool) []int {
	idx := make([]int, len(hashes))
	improved := make([]uint32, len(hashes))
	for i, h := range hashes {
		idx[i], improved[i] = i, scalaImprove(h)
	}
	if !scala213 {
		sort.SliceStable(idx, func(i, j int) bool {
			return digitsLess(improved[idx[i]], improved[idx[j]])
		})
		return idx
	}
	var res []int
	champ(idx, improved, 0, &res)
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

// champ appends elems (all equal in the hash digits below shift) in CHAMP
// order: the elements alone in their digit at this level first, by digit,
// then the sub-nodes, by digit, each in the same order.
func champ(elems []int, hashes []uint32, shift uint, out *[]int) {
	if shift >= 35 || len(elems) == 1 {
		*out = append(*out, elems...) // a collision node keeps insertion order
		return
	}
	var buckets [32][]int
	for _, e := range elems {
		d := (hashes[e] >> shift) & 31
		buckets[d] = append(buckets[d], e)
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

// The ## of the Scala values Spark's volume specs are made of: strings,
// booleans, options, an empty map and case classes (scala.util.hashing.
// MurmurHash3; 2.13 mixes a case class's name in, 2.12 does not).
type (
	scalaProduct struct {
		prefix string
		fields []any
	}
	scalaOption   struct{ value *string } // nil: None
	scalaEmptyMap struct{}
)

const (
	murmurProductSeed uint32 = 0xcafebabe
)

func murmurMixLast(h, k uint32) uint32 {
	k *= 0xcc9e2d51
	k = bits.RotateLeft32(k, 15)
	k *= 0x1b873593
	return h ^ k
}

func murmurMix(h, data uint32) uint32 {
	h = murmurMixLast(h, data)
	h = bits.RotateLeft32(h, 13)
	return h*5 + 0xe6546b64
}

func murmurFinalize(h uint32, n int) uint32 {
	h ^= uint32(n)
	h ^= h >> 16
	h *= 0x85ebca6b
	h ^= h >> 13
	h *= 0xc2b2ae35
	h ^= h >> 16
	return h
}

// scalaHash is v.## in Scala 2.13 (scala213) or 2.12.
func scalaHash(v any, scala213 bool) int32 {
	switch x := v.(type) {
	case string:
		return javaStringHash(x)
	case bool:
		if x {
			return 1231
		}
		return 1237
	case scalaOption:
		if x.value == nil {
			return javaStringHash("None")
		}
		return scalaHash(scalaProduct{"Some", []any{*x.value}}, scala213)
	case scalaEmptyMap:
		// MurmurHash3.emptyMapHash: unorderedHash(Nil, "Map".hashCode).
		h := murmurMix(murmurMix(uint32(javaStringHash("Map")), 0), 0)
		return int32(murmurFinalize(murmurMixLast(h, 1), 0))
	case scalaProduct:
		if len(x.fields) == 0 {
			return javaStringHash(x.prefix)
		}
		h := murmurProductSeed
		if scala213 {
			h = murmurMix(h, uint32(javaStringHash(x.prefix)))
		}
		for _, f := range x.fields {
			h = murmurMix(h, uint32(scalaHash(f, scala213)))
		}
		return int32(murmurFinalize(h, len(x.fields)))
	}
	panic(fmt.Sprintf("scalaHash: %T", v))
}
