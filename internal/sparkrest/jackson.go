// Package sparkrest holds the JSON form of Spark's REST submission protocol
// (the Jackson pretty printer Spark uses). Its fake servers are in
// sparkrest/sparkresttest, for tests only.
package sparkrest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// Marshal encodes v as Spark's SubmitRestProtocolMessage.toJson does:
// Jackson with INDENT_OUTPUT. Field order is v's declaration order (declare
// the fields alphabetically, as @JsonPropertyOrder(alphabetic = true) does),
// map keys are sorted, and nulls are left out by the caller's omitempty tags.
func Marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return Indent(buf.Bytes())
}

// Indent re-lays compact JSON out as Jackson's DefaultPrettyPrinter does:
//
//	{
//	  "key" : "value",
//	  "list" : [ "a", "b" ],
//	  "empty" : { }
//	}
//
// Strings are escaped as Jackson does (no HTML escaping, non-ASCII kept,
// control characters as \n, \t, … or \u00XX). There is no trailing newline.
func Indent(compact []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(compact))
	dec.UseNumber()
	var out bytes.Buffer
	if err := writeValue(&out, dec, 0); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("trailing data after the JSON value")
	}
	return out.Bytes(), nil
}

func writeValue(out *bytes.Buffer, dec *json.Decoder, depth int) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	return writeToken(out, dec, tok, depth)
}

func writeToken(out *bytes.Buffer, dec *json.Decoder, tok json.Token, depth int) error {
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			if !dec.More() {
				out.WriteString("{ }")
				_, err := dec.Token()
				return err
			}
			out.WriteString("{")
			first := true
			for dec.More() {
				k, err := dec.Token()
				if err != nil {
					return err
				}
				key, ok := k.(string)
				if !ok {
					return fmt.Errorf("object key %v is not a string", k)
				}
				if !first {
					out.WriteString(",")
				}
				first = false
				out.WriteString("\n")
				out.WriteString(strings.Repeat("  ", depth+1))
				writeString(out, key)
				out.WriteString(" : ")
				if err := writeValue(out, dec, depth+1); err != nil {
					return err
				}
			}
			if _, err := dec.Token(); err != nil {
				return err
			}
			out.WriteString("\n")
			out.WriteString(strings.Repeat("  ", depth))
			out.WriteString("}")
		case '[':
			if !dec.More() {
				out.WriteString("[ ]")
				_, err := dec.Token()
				return err
			}
			out.WriteString("[ ")
			first := true
			for dec.More() {
				if !first {
					out.WriteString(", ")
				}
				first = false
				if err := writeValue(out, dec, depth); err != nil {
					return err
				}
			}
			if _, err := dec.Token(); err != nil {
				return err
			}
			out.WriteString(" ]")
		default:
			return fmt.Errorf("unexpected %v", t)
		}
	case string:
		writeString(out, t)
	case json.Number:
		out.WriteString(t.String())
	case bool:
		fmt.Fprintf(out, "%t", t)
	case nil:
		out.WriteString("null")
	default:
		return fmt.Errorf("unexpected token %v", t)
	}
	return nil
}

// writeString escapes s as Jackson's JsonGenerator does by default.
func writeString(out *bytes.Buffer, s string) {
	out.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			out.WriteString(`\"`)
		case '\\':
			out.WriteString(`\\`)
		case '\n':
			out.WriteString(`\n`)
		case '\r':
			out.WriteString(`\r`)
		case '\t':
			out.WriteString(`\t`)
		case '\b':
			out.WriteString(`\b`)
		case '\f':
			out.WriteString(`\f`)
		default:
			if r < 0x20 {
				fmt.Fprintf(out, `\u%04X`, r)
			} else {
				out.WriteRune(r)
			}
		}
	}
	out.WriteByte('"')
}
