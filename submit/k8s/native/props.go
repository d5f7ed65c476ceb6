package native

import (
	"bufio"
	"sort"
	"strconv"
	"strings"
	"time"
)

// StoreProperties renders props as java.util.Properties.store(Writer, comment)
// does: the comment line, the date line, then key=value lines with Java's
// escaping (no \uXXXX: the Writer variant keeps non-ASCII as is). Java's
// order is its hash table's; here keys are sorted (spark.properties is read
// back as a map, so the order carries no meaning).
func StoreProperties(props map[string]string, comment string, now time.Time) string {
	var b strings.Builder
	b.WriteString("#")
	b.WriteString(storeComment(comment))
	b.WriteString("\n#")
	// Date.toString(): "EEE MMM dd HH:mm:ss zzz yyyy".
	b.WriteString(now.Format("Mon Jan 02 15:04:05 MST 2006"))
	b.WriteString("\n")
	keys := make([]string, 0, len(props))
	for k := range props {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		b.WriteString(escapeProp(k, true))
		b.WriteString("=")
		b.WriteString(escapeProp(props[k], false))
		b.WriteString("\n")
	}
	return b.String()
}

// storeComment writes a comment as Properties.writeComments does: line
// breaks continue the comment with a '#'.
func storeComment(c string) string {
	var b strings.Builder
	for i := 0; i < len(c); i++ {
		switch ch := c[i]; ch {
		case '\r', '\n':
			if ch == '\r' && i+1 < len(c) && c[i+1] == '\n' {
				i++
			}
			b.WriteString("\n")
			if i+1 < len(c) && c[i+1] != '#' && c[i+1] != '!' {
				b.WriteString("#")
			}
		default:
			b.WriteByte(ch)
		}
	}
	return b.String()
}

// escapeProp is Properties.saveConvert with escUnicode=false.
func escapeProp(s string, key bool) string {
	var b strings.Builder
	for i, r := range s {
		switch r {
		case ' ':
			if i == 0 || key {
				b.WriteString(`\ `)
			} else {
				b.WriteByte(' ')
			}
		case '\t':
			b.WriteString(`\t`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\f':
			b.WriteString(`\f`)
		case '=', ':', '#', '!', '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// ParseProperties reads the java.util.Properties text format (Properties.load):
// comments, line continuations, the '=', ':' and blank separators and the
// escapes. A later duplicate key wins, as in Java.
func ParseProperties(text string) map[string]string {
	out := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(make([]byte, 64*1024), 16*1024*1024)
	var logical strings.Builder
	cont := false
	for sc.Scan() {
		line := sc.Text()
		line = strings.TrimRight(line, "\r")
		if cont {
			line = strings.TrimLeft(line, " \t\f")
		} else {
			t := strings.TrimLeft(line, " \t\f")
			if t == "" || t[0] == '#' || t[0] == '!' {
				continue
			}
			line = t
		}
		// An odd number of trailing backslashes continues the line.
		n := 0
		for i := len(line) - 1; i >= 0 && line[i] == '\\'; i-- {
			n++
		}
		if n%2 == 1 {
			logical.WriteString(line[:len(line)-1])
			cont = true
			continue
		}
		logical.WriteString(line)
		cont = false
		k, v := splitProp(logical.String())
		out[k] = v
		logical.Reset()
	}
	if cont {
		k, v := splitProp(logical.String())
		out[k] = v
	}
	return out
}

func splitProp(line string) (string, string) {
	// The key ends at the first unescaped '=', ':' or blank.
	i := 0
	for i < len(line) {
		c := line[i]
		if c == '\\' {
			i += 2
			continue
		}
		if c == '=' || c == ':' || c == ' ' || c == '\t' || c == '\f' {
			break
		}
		i++
	}
	if i > len(line) {
		i = len(line)
	}
	key := line[:i]
	rest := strings.TrimLeft(line[i:], " \t\f")
	if rest != "" && (rest[0] == '=' || rest[0] == ':') {
		rest = strings.TrimLeft(rest[1:], " \t\f")
	}
	return unescapeProp(key), unescapeProp(rest)
}

func unescapeProp(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 >= len(s) {
			b.WriteByte(c)
			continue
		}
		i++
		switch s[i] {
		case 't':
			b.WriteByte('\t')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 'f':
			b.WriteByte('\f')
		case 'u':
			if i+4 < len(s) {
				if n, err := strconv.ParseUint(s[i+1:i+5], 16, 16); err == nil {
					b.WriteRune(rune(n))
					i += 4
					continue
				}
			}
			b.WriteByte('u')
		default:
			b.WriteByte(s[i])
		}
	}
	return b.String()
}
