package native

import (
	"sort"
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
