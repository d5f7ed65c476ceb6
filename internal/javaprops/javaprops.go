// Package javaprops parses the java.util.Properties text format
// (Properties.load) as Spark and Ivy read it: spark-defaults.conf,
// --properties-file, the driver's spark.properties and Ivy's
// <properties file>. It is the one parser of that format in prebake.
package javaprops

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// An Entry is one logical line that holds a key; Start and End are its byte
// range in the input, line terminator included (comments and blank lines
// stay outside every entry, so a caller can drop entries byte for byte).
type Entry struct {
	Key, Value string
	Start, End int
}

// ErrMalformedU is java.util.Properties.loadConvert's failure on a \u
// escape without four hex digits: Spark and Ivy let it through, so both fail
// on such a file.
var ErrMalformedU = errors.New("malformed \\uxxxx encoding (java.util.Properties rejects it, and so does spark-submit)")

// Parse parses data: logical lines joined by a trailing odd run of
// backslashes, # and ! comments, the key terminated by an unescaped '=',
// ':' or blank, \uXXXX (UTF-16 code units) and \t \n \r \f escapes. Every
// entry is returned in file order (a later duplicate key is what Java
// keeps); err is the first line Properties.load would reject, wrapping
// ErrMalformedU and naming the line.
func Parse(data []byte) (entries []Entry, err error) {
	i := 0
	n := len(data)
	for i < n {
		start := i
		// Skip leading whitespace of the natural line.
		j := i
		for j < n && isSpace(data[j]) {
			j++
		}
		if j >= n {
			break
		}
		if data[j] == '\n' || data[j] == '\r' || data[j] == '#' || data[j] == '!' {
			i = lineEnd(data, j)
			continue
		}
		// Gather the logical line.
		var logical []byte
		k := j
		for {
			e := k
			for e < n && data[e] != '\n' && data[e] != '\r' {
				e++
			}
			seg := data[k:e]
			bs := 0
			for x := len(seg) - 1; x >= 0 && seg[x] == '\\'; x-- {
				bs++
			}
			next := lineEnd(data, e)
			if bs%2 == 1 && next <= n && e < n {
				logical = append(logical, seg[:len(seg)-1]...)
				k = next
				for k < n && isSpace(data[k]) {
					k++
				}
				continue
			}
			if bs%2 == 1 {
				// A trailing backslash at EOF is dropped by Properties.load.
				seg = seg[:len(seg)-1]
			}
			logical = append(logical, seg...)
			i = next
			break
		}
		key, val, lerr := split(logical)
		if lerr != nil && err == nil {
			err = fmt.Errorf("line %d: %w", bytes.Count(data[:start], []byte("\n"))+1, lerr)
		}
		entries = append(entries, Entry{Key: key, Value: val, Start: start, End: i})
	}
	return entries, err
}

// Map returns the entries of data as Properties.load leaves them: a later
// duplicate key wins.
func Map(data []byte) (map[string]string, error) {
	entries, err := Parse(data)
	m := make(map[string]string, len(entries))
	for _, e := range entries {
		m[e.Key] = e.Value
	}
	return m, err
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\f' }

// lineEnd returns the index after the line terminator at or after i.
func lineEnd(data []byte, i int) int {
	for i < len(data) && data[i] != '\n' && data[i] != '\r' {
		i++
	}
	if i < len(data) && data[i] == '\r' {
		i++
		if i < len(data) && data[i] == '\n' {
			i++
		}
		return i
	}
	if i < len(data) {
		i++
	}
	return i
}

func split(line []byte) (string, string, error) {
	keyLen := 0
	valStart := len(line)
	hasSep := false
	escaped := false
	for keyLen < len(line) {
		c := line[keyLen]
		if (c == '=' || c == ':') && !escaped {
			valStart = keyLen + 1
			hasSep = true
			break
		}
		if isSpace(c) && !escaped {
			valStart = keyLen + 1
			break
		}
		if c == '\\' {
			escaped = !escaped
		} else {
			escaped = false
		}
		keyLen++
	}
	for valStart < len(line) {
		c := line[valStart]
		if !isSpace(c) {
			if !hasSep && (c == '=' || c == ':') {
				hasSep = true
			} else {
				break
			}
		}
		valStart++
	}
	key, err := unescape(line[:keyLen])
	if err != nil {
		return "", "", err
	}
	val, err := unescape(line[min(valStart, len(line)):])
	return key, val, err
}

// unescape is Properties.loadConvert: \t \n \r \f, \uXXXX as UTF-16 code
// units (a surrogate pair is one character), any other escaped character
// as itself.
func unescape(b []byte) (string, error) {
	if bytes.IndexByte(b, '\\') < 0 && utf8.Valid(b) {
		return string(b), nil
	}
	var s strings.Builder
	var units []uint16 // pending \u code units
	flush := func() {
		if len(units) > 0 {
			s.WriteString(string(utf16.Decode(units)))
			units = units[:0]
		}
	}
	for i := 0; i < len(b); i++ {
		c := b[i]
		if c != '\\' || i+1 >= len(b) {
			flush()
			s.WriteByte(c)
			continue
		}
		i++
		c = b[i]
		if c == 'u' {
			if i+5 > len(b) {
				return "", ErrMalformedU
			}
			v, err := strconv.ParseUint(string(b[i+1:i+5]), 16, 16)
			if err != nil {
				return "", ErrMalformedU
			}
			units = append(units, uint16(v))
			i += 4
			continue
		}
		flush()
		switch c {
		case 't':
			s.WriteByte('\t')
		case 'n':
			s.WriteByte('\n')
		case 'r':
			s.WriteByte('\r')
		case 'f':
			s.WriteByte('\f')
		default:
			s.WriteByte(c)
		}
	}
	flush()
	return s.String(), nil
}
