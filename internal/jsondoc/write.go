package jsondoc

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// SchemaDir is where the schemas go, under the docs directory.
const SchemaDir = "schemas"

// Marshal is s as the committed file holds it: indented, one newline at the end.
func (s *Schema) Marshal() ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(s); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// WriteSchemas writes the schema of every doc into dir/schemas
// (NAME.schema.json), replacing what the directory held.
func WriteSchemas(dir string, docs []Doc, schema func(Doc) (*Schema, error)) error {
	out := filepath.Join(dir, SchemaDir)
	if err := os.RemoveAll(out); err != nil {
		return err
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	for _, d := range docs {
		s, err := schema(d)
		if err != nil {
			return err
		}
		b, err := s.Marshal()
		if err != nil {
			return fmt.Errorf("%s: %w", d.Name, err)
		}
		if err := os.WriteFile(filepath.Join(out, d.Name+".schema.json"), b, 0o644); err != nil {
			return err
		}
	}
	return nil
}
