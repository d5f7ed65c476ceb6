package rewrite

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/prebake/prebake/errdefs"
	"github.com/prebake/prebake/internal/redact"
	"github.com/prebake/prebake/submit"
	"go.yaml.in/yaml/v3"
)

// ManifestResult is the result of Manifest. Its JSON form is stable (the
// CLI's JSON document for a rewritten manifest):
//
//	{
//	  "file": "app.yaml",
//	  "yaml": "apiVersion: …",              // the rewritten manifest (product: not redacted)
//	  "documents": [                        // one per YAML document, in order
//	    {"document": 1,                     // 1-based index in the file
//	     "kind": "SparkApplication",        // "" for an empty document
//	     "name": "spark-pi",
//	     "rewritten": true,                 // false: passed through byte for byte
//	     "python": false,                   // spec.type Python: the jars go to deps.pyFiles too
//	     "packages": {"packages": "g:a:v,…", "repositories": "…", "excludes": "…", "ivy": "…", "ivySettings": "…"},
//	     "jarsFrom": "image REF",           // "image REF", "store URL" or "" (nothing added)
//	     "lockHash": "…",                   // optional
//	     "changes": [{"action": "removed|replaced|added", "target": "spec.deps.packages", "source": "manifest app.yaml document 1", "old": "…", "new": "…", "reason": "…"}]}
//	  ],
//	  "warnings": ["…"]
//	}
type ManifestResult struct {
	File      string             `json:"file"`
	YAML      string             `json:"yaml"`
	Documents []ManifestDocument `json:"documents"`
	Warnings  []Warning          `json:"warnings"`
}

// ManifestDocument reports what Manifest did to one YAML document.
type ManifestDocument struct {
	Document int             `json:"document"`
	Kind     string          `json:"kind,omitempty"`
	Name     string          `json:"name,omitempty"`
	Result   bool            `json:"rewritten"`
	Python   bool            `json:"python"`
	Packages submit.Packages `json:"packages"`
	JarsFrom string          `json:"jarsFrom"`
	LockHash string          `json:"lockHash,omitempty"`
	Changes  []Change        `json:"changes"`
}

// The spark-operator API group (sparkoperator.k8s.io/v1beta2 and its
// predecessors, whose spec fields rewrite touches are the same).
const operatorGroup = "sparkoperator.k8s.io/"

// Operator kinds Manifest rewrites.
const (
	KindSparkApplication          = "SparkApplication"
	KindScheduledSparkApplication = "ScheduledSparkApplication"
)

// Manifest rewrites kubeflow spark-operator manifests (one or more
// YAML documents; name names the file in errors and changes) so that Spark
// resolves nothing at run time. For each SparkApplication (its spec) and
// ScheduledSparkApplication (its spec.template):
//
//   - spec.deps.packages, .repositories and .excludePackages, and the
//     sparkConf keys spark.jars.packages, .repositories, .excludes, .ivy and
//     .ivySettings are removed; the packages (deps beat sparkConf, as the
//     operator's --packages beats --conf) are resolved by the JarSource;
//   - spec.deps.jars becomes the user's jars (deps.jars, else sparkConf
//     spark.jars, which is then removed) followed by the resolved jars'
//     cluster URLs; Python apps (spec.type Python) get them in
//     spec.deps.pyFiles too. The operator always submits in cluster mode,
//     so jars without cluster URLs (neither in a baked image nor in a
//     store) are a usage error;
//   - the set's Python half (Jars.Python, the lock's wheels): an image
//     holds them on its own PYTHONPATH; a store's archive is appended to
//     spec.deps.archives and its directory to the driver's and executors'
//     PYTHONPATH (the user's settings kept first, with a warning); a
//     local Python file the document runs that installs packages itself
//     is warned about. A JarSource that is an AppSource also gets the
//     document's image (the wheels' target);
//   - with WithImage, spec.image is set, and spec.driver.image,
//     spec.executor.image and the sparkConf image keys are replaced where
//     set.
//
// Comments and key order are kept (the document is re-encoded from the YAML
// node tree, with the file's indentation). Every other document, and every
// SparkApplication with nothing to change, is passed through byte for byte.
// Errors name the file and the document (1-based).
func Manifest(ctx context.Context, name string, data []byte, opts ...Option) (*ManifestResult, error) {
	o, err := makeOptions(opts)
	if err != nil {
		return nil, err
	}
	res := &ManifestResult{File: name, Documents: []ManifestDocument{}, Warnings: []Warning{}}
	var out bytes.Buffer
	for i, seg := range splitYAMLDocuments(data) {
		d := ManifestDocument{Document: i + 1, Changes: []Change{}}
		text, err := rewriteDocument(ctx, o, name, seg, &d, res)
		if err != nil {
			return nil, err
		}
		out.Write(text)
		res.Documents = append(res.Documents, d)
	}
	res.YAML = out.String()
	redactWarnings(res.Warnings)
	return res, nil
}

// A yamlSegment is one document of a multi-document YAML stream, as bytes:
// pre (comments before the "---" line), the marker line itself (empty for
// an implicit first document), and the body after it.
type yamlSegment struct {
	pre, marker, body []byte
	line              int // lines in the file before pre
}

func (s yamlSegment) bytes() []byte {
	return slices.Concat(s.pre, s.marker, s.body)
}

// splitYAMLDocuments splits a YAML stream at its document markers: lines
// that start with "---" followed by a blank or the line's end (YAML forbids
// such lines inside content, so this is exact). Comments and directives
// before the first marker belong to the first document.
func splitYAMLDocuments(data []byte) []yamlSegment {
	var segs []yamlSegment
	cur := yamlSegment{}
	start := 0 // start of cur's current part
	for i := 0; i < len(data); {
		end := bytes.IndexByte(data[i:], '\n')
		if end < 0 {
			end = len(data)
		} else {
			end += i + 1
		}
		line := data[i:end]
		if isDocMarker(line) {
			if len(segs) == 0 && cur.marker == nil && onlyTrivia(data[start:i]) {
				// Comments before the first marker: the first document's.
				cur.pre = data[start:i]
			} else {
				cur.body = data[start:i]
				segs = append(segs, cur)
				cur = yamlSegment{line: bytes.Count(data[:i], []byte("\n"))}
			}
			cur.marker = line
			start = end
		}
		i = end
	}
	cur.body = data[start:]
	return append(segs, cur)
}

func isDocMarker(line []byte) bool {
	if !bytes.HasPrefix(line, []byte("---")) {
		return false
	}
	return len(line) == 3 || line[3] == ' ' || line[3] == '\t' || line[3] == '\n' || line[3] == '\r'
}

// onlyTrivia reports whether b holds only blank lines, comments and
// directives.
func onlyTrivia(b []byte) bool {
	for _, l := range bytes.Split(b, []byte("\n")) {
		t := bytes.TrimSpace(l)
		if len(t) > 0 && t[0] != '#' && t[0] != '%' {
			return false
		}
	}
	return true
}

// rewriteDocument rewrites one document, filling d, and returns its new
// bytes (the original bytes when nothing changed).
func rewriteDocument(ctx context.Context, o *options, file string, seg yamlSegment, d *ManifestDocument, res *ManifestResult) ([]byte, error) {
	orig := seg.bytes()
	body := seg.body
	if seg.marker != nil {
		// "--- # comment" or "--- {…}": the rest of the marker line is
		// content, and the body's line 1 is the marker's line.
		body = slices.Concat(seg.marker[3:], seg.body)
	}
	where := fmt.Sprintf("manifest %s document %d", file, d.Document)
	var root yaml.Node
	err := yaml.NewDecoder(bytes.NewReader(body)).Decode(&root)
	if errors.Is(err, io.EOF) {
		return orig, nil
	}
	if err != nil {
		start := 1 + bytes.Count(seg.pre, []byte("\n"))
		return nil, errdefs.New(errdefs.Invalid, fmt.Errorf("%s (its line 1 is the file's line %d): %w", where, start+seg.line, err))
	}
	top := &root
	if top.Kind == yaml.DocumentNode && len(top.Content) == 1 {
		top = top.Content[0]
	}
	if top.Kind != yaml.MappingNode {
		return orig, nil
	}
	api, kind := scalarAt(top, "apiVersion"), scalarAt(top, "kind")
	d.Kind = kind
	if md := mapValue(top, "metadata"); md != nil {
		d.Name = scalarAt(md, "name")
	}
	if !strings.HasPrefix(api, operatorGroup) || (kind != KindSparkApplication && kind != KindScheduledSparkApplication) {
		return orig, nil
	}
	where += fmt.Sprintf(" (%s %s)", kind, d.Name)
	spec, specPath := mapValue(top, "spec"), "spec"
	if kind == KindScheduledSparkApplication && spec != nil {
		spec, specPath = mapValue(spec, "template"), "spec.template"
	}
	if spec == nil || spec.Kind != yaml.MappingNode {
		return nil, errdefs.Errorf(errdefs.Invalid, "%s: %s is missing or not a mapping", where, specPath)
	}
	m := &manifestRewriter{o: o, d: d, res: res, spec: spec, path: specPath, where: where,
		source: fmt.Sprintf("manifest %s document %d", file, d.Document)}
	if err := m.run(ctx); err != nil {
		return nil, err
	}
	if len(d.Changes) == 0 {
		return orig, nil
	}
	d.Result = true
	indent, compact := detectIndent(top)
	var b bytes.Buffer
	b.Write(seg.pre)
	if seg.marker != nil {
		b.WriteString("---\n")
	}
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(indent)
	if compact {
		enc.CompactSeqIndent()
	}
	if err := enc.Encode(&root); err != nil {
		return nil, errdefs.New(errdefs.Internal, fmt.Errorf("%s: encoding: %w", where, err))
	}
	if err := enc.Close(); err != nil {
		return nil, errdefs.New(errdefs.Internal, fmt.Errorf("%s: encoding: %w", where, err))
	}
	return b.Bytes(), nil
}

type manifestRewriter struct {
	o     *options
	d     *ManifestDocument
	res   *ManifestResult
	spec  *yaml.Node
	path  string // "spec" or "spec.template"
	where string // for errors
	// source names the document in changes.
	source string
}

func (m *manifestRewriter) change(action, target, old, new, reason string) {
	key := target[strings.LastIndexByte(target, '.')+1:]
	if strings.HasPrefix(target, m.path+".sparkConf.") {
		key = strings.TrimPrefix(target, m.path+".sparkConf.")
	}
	m.d.Changes = append(m.d.Changes, Change{Action: action, Target: target, Source: m.source,
		Old: redactList(redact.Conf(key, old)), New: redactList(redact.Conf(key, new)), Reason: reason})
}

func (m *manifestRewriter) warn(format string, args ...any) { m.warnKind(WarnOther, format, args...) }

func (m *manifestRewriter) warnKind(kind WarningKind, format string, args ...any) {
	m.res.Warnings = append(m.res.Warnings, Warning{Kind: kind, Text: m.where + ": " + fmt.Sprintf(format, args...)})
}

// depsKeys maps the spec.deps lists that make Spark resolve to their
// sparkConf keys.
var depsKeys = []struct{ field, key string }{
	{"packages", "spark.jars.packages"},
	{"repositories", "spark.jars.repositories"},
	{"excludePackages", "spark.jars.excludes"},
}

func (m *manifestRewriter) run(ctx context.Context) error {
	spec := m.spec
	deps := mapValue(spec, "deps")
	if deps != nil && deps.Kind != yaml.MappingNode && !isNull(deps) {
		return errdefs.Errorf(errdefs.Invalid, "%s: %s.deps is not a mapping", m.where, m.path)
	}
	conf := mapValue(spec, "sparkConf")
	if conf != nil && conf.Kind != yaml.MappingNode && !isNull(conf) {
		return errdefs.Errorf(errdefs.Invalid, "%s: %s.sparkConf is not a mapping", m.where, m.path)
	}
	m.d.Python = strings.EqualFold(scalarAt(spec, "type"), "python")

	// What the operator's spark-submit would resolve: --packages (deps)
	// beats --conf spark.jars.packages (sparkConf).
	var p submit.Packages
	dst := map[string]*string{"packages": &p.Packages, "repositories": &p.Repositories, "excludePackages": &p.Excludes}
	for _, dk := range depsKeys {
		list, err := m.stringList(deps, dk.field)
		if err != nil {
			return err
		}
		v := strings.Join(list, ",")
		if strings.TrimSpace(v) == "" {
			v = scalarAt(conf, dk.key)
		}
		*dst[dk.field] = v
	}
	p.Ivy, p.IvySettings = scalarAt(conf, "spark.jars.ivy"), scalarAt(conf, "spark.jars.ivySettings")
	m.d.Packages = submit.Packages{Packages: redact.String(p.Packages), Repositories: redactList(p.Repositories),
		Excludes: redact.String(p.Excludes), Ivy: redact.String(p.Ivy), IvySettings: redact.String(p.IvySettings)}
	m.detectUnreachable()

	var jars *Jars
	if m.o.source != nil {
		var err error
		if jars, err = m.sourceJars(ctx, p); err != nil {
			return fmt.Errorf("%s: %w", m.where, err)
		}
	}
	if err := m.checkJars(jars); err != nil {
		return err
	}

	// Remove every packages source.
	for _, dk := range depsKeys {
		if list, _ := m.stringList(deps, dk.field); mapDelete(deps, dk.field) {
			m.change(ChangeRemoved, m.path+".deps."+dk.field, strings.Join(list, ","), "",
				"prebake resolved it ahead of time; the operator would pass it as --"+map[string]string{"packages": "packages", "repositories": "repositories", "excludePackages": "exclude-packages"}[dk.field]+" and the driver pod would resolve it again")
		}
	}
	for _, k := range submit.PackagesKeys() {
		if v := scalarAt(conf, k); mapDelete(conf, k) {
			m.change(ChangeRemoved, m.path+".sparkConf."+k, v, "", removeReason(k))
		}
	}

	if jars != nil && len(jars.Local) > 0 {
		m.d.JarsFrom, m.d.LockHash = redact.String(jars.From), jars.LockHash
		why := "the operator submits in cluster mode: the driver and executors read the jars from " + jars.From
		if msg := fileURLsWarning(jars); msg != "" {
			m.warnKind(WarnFileURLs, "%s", msg)
		}
		m.mergeList("jars", "spark.jars", jars.Cluster, "one merged jar list (the user's first, then the resolved jars); "+why)
		if m.d.Python {
			m.mergeList("pyFiles", "spark.submit.pyFiles", jars.Cluster, "Python app: Spark also puts --packages jars on the Python path")
		}
	}
	if err := m.planPython(jars); err != nil {
		return err
	}
	if jars != nil && (len(jars.Local) > 0 || jars.Python != nil && len(jars.Python.Conf) > 0) {
		from := jars.From
		if from == "" && jars.Python != nil {
			from = jars.Python.From
		}
		m.addConf(jars.Conf, from)
	}
	if m.o.image != "" {
		m.setImage()
	}
	// Drop the mappings the removals emptied.
	for _, k := range []string{"deps", "sparkConf"} {
		if v := mapValue(spec, k); v != nil && v.Kind == yaml.MappingNode && len(v.Content) == 0 && v.HeadComment == "" && v.FootComment == "" {
			mapDelete(spec, k)
		}
	}
	return nil
}

// checkJars validates what the JarSource gave for a manifest: cluster mode
// needs cluster URLs.
func (m *manifestRewriter) checkJars(j *Jars) error {
	if j == nil || len(j.Local) == 0 && len(j.Cluster) == 0 {
		return nil
	}
	if j.Cluster == nil {
		return errdefs.New(errdefs.BadArgument, fmt.Errorf("%s: the operator always submits in cluster mode and the driver does not run here, so local jar paths cannot work: %w", m.where, ErrNoClusterJars))
	}
	if len(j.Cluster) != len(j.Local) {
		return errdefs.Errorf(errdefs.Internal, "%s: the jar source gave %d cluster URLs for %d jars", m.where, len(j.Cluster), len(j.Local))
	}
	for _, u := range j.Cluster {
		if strings.ContainsAny(u, ",\n") {
			return errdefs.Errorf(errdefs.Invalid, "%s: jar URL %q holds a comma or newline, which Spark's jar lists cannot carry", m.where, redact.URL(u))
		}
	}
	return nil
}

// mergeList sets spec.deps.<field> to the user's list (deps.<field>, else
// sparkConf <key>, which is then removed: the operator's --jars would
// silently beat it) followed by add.
func (m *manifestRewriter) mergeList(field, key string, add []string, reason string) {
	deps := m.ensureMap("deps")
	conf := mapValue(m.spec, "sparkConf")
	target := m.path + ".deps." + field
	list, _ := m.stringList(deps, field)
	confVal := scalarAt(conf, key)
	if mapDelete(conf, key) {
		if len(list) == 0 {
			for _, s := range strings.Split(confVal, ",") {
				if s = strings.TrimSpace(s); s != "" {
					list = append(list, s)
				}
			}
			m.change(ChangeRemoved, m.path+".sparkConf."+key, confVal, "", "merged into "+target+" (the operator passes it as a flag, which beats the conf key)")
		} else {
			m.change(ChangeRemoved, m.path+".sparkConf."+key, confVal, "", target+" is also set and wins in Spark (a flag beats the conf key): this value had no effect")
		}
	}
	old := strings.Join(list, ",")
	seq := mapValue(deps, field)
	if seq == nil || seq.Kind != yaml.SequenceNode {
		seq = &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
		for _, s := range list {
			seq.Content = append(seq.Content, strNode(s))
		}
		mapSet(deps, field, seq)
	}
	have := map[string]bool{}
	for _, s := range list {
		have[s] = true
	}
	for _, s := range add {
		if !have[s] {
			have[s] = true
			list = append(list, s)
			seq.Content = append(seq.Content, strNode(s))
		}
	}
	action := ChangeAdded
	if old != "" {
		action = ChangeReplaced
	}
	m.change(action, target, old, strings.Join(list, ","), reason)
}

// setImage applies the image (WithImage).
func (m *manifestRewriter) setImage() {
	img := m.o.image
	if msg := layoutImageWarning(img); msg != "" {
		m.warnKind(WarnLayoutImage, "%s", msg)
	}
	why := "the image holds the jars"
	if n := mapValue(m.spec, "image"); n != nil {
		if n.Value != img {
			m.change(ChangeReplaced, m.path+".image", n.Value, img, why)
			setStr(n, img)
		}
	} else {
		m.change(ChangeAdded, m.path+".image", "", img, why)
		mapSet(m.spec, "image", strNode(img), "mode", "type")
	}
	for _, role := range []string{"driver", "executor"} {
		if n := mapValue(mapValue(m.spec, role), "image"); n != nil && n.Value != img {
			m.change(ChangeReplaced, m.path+"."+role+".image", n.Value, img, why+"; it replaces the "+role+" image the user set")
			setStr(n, img)
		}
	}
	conf := mapValue(m.spec, "sparkConf")
	for _, k := range []string{"spark.kubernetes.container.image", "spark.kubernetes.driver.container.image", "spark.kubernetes.executor.container.image"} {
		if n := mapValue(conf, k); n != nil && n.Value != img {
			m.change(ChangeReplaced, m.path+".sparkConf."+k, n.Value, img, why+"; it replaces the image the user set")
			setStr(n, img)
		}
	}
}

// detectUnreachable warns about packages the manifest sets where rewrite
// cannot reach them.
func (m *manifestRewriter) detectUnreachable() {
	if cm := scalarAt(m.spec, "sparkConfigMap"); cm != "" {
		m.warn("%s.sparkConfigMap %s becomes SPARK_CONF_DIR in the pods; prebake cannot see it: make sure its spark-defaults.conf sets no spark.jars.packages, .repositories or .excludes", m.path, cm)
	}
	for _, role := range []string{"driver", "executor"} {
		env := mapValue(mapValue(m.spec, role), "env")
		if env == nil || env.Kind != yaml.SequenceNode {
			continue
		}
		for _, e := range env.Content {
			name, val := scalarAt(e, "name"), scalarAt(e, "value")
			if f := submit.EnvPackages(name, val); f != "" {
				m.warn("%s.%s.env %s sets %s, which the rewrite cannot remove: delete it from the manifest, and add the packages to spec.deps.packages before running prebake", m.path, role, name, f)
			}
		}
	}
}

// stringList reads a list of strings at key in mapping n (nil, absent or
// null: empty).
func (m *manifestRewriter) stringList(n *yaml.Node, key string) ([]string, error) {
	v := mapValue(n, key)
	if v == nil || isNull(v) {
		return nil, nil
	}
	if v.Kind != yaml.SequenceNode {
		return nil, errdefs.Errorf(errdefs.Invalid, "%s: %s.deps.%s is not a list of strings", m.where, m.path, key)
	}
	var out []string
	for _, c := range v.Content {
		if c.Kind != yaml.ScalarNode {
			return nil, errdefs.Errorf(errdefs.Invalid, "%s: %s.deps.%s line %d: not a string", m.where, m.path, key, c.Line)
		}
		if s := strings.TrimSpace(c.Value); s != "" {
			out = append(out, s)
		}
	}
	return out, nil
}

// ensureMap returns spec.<key>, creating an empty mapping (after
// mainApplicationFile, arguments or sparkVersion when present) if needed.
func (m *manifestRewriter) ensureMap(key string) *yaml.Node {
	if v := mapValue(m.spec, key); v != nil && v.Kind == yaml.MappingNode {
		return v
	}
	v := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	if !mapReplace(m.spec, key, v) {
		mapSet(m.spec, key, v, "sparkVersion", "arguments", "mainApplicationFile")
	}
	return v
}

// YAML node helpers. A nil mapping reads as empty.

func mapValue(n *yaml.Node, key string) *yaml.Node {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

func scalarAt(n *yaml.Node, key string) string {
	v := mapValue(n, key)
	if v == nil || v.Kind != yaml.ScalarNode || isNull(v) {
		return ""
	}
	return v.Value
}

func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.Tag == "!!null"
}

// mapDelete removes key from n and reports whether it was there.
func mapDelete(n *yaml.Node, key string) bool {
	if n == nil || n.Kind != yaml.MappingNode {
		return false
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			// The removed key's head comment is the user's text: keep it
			// above the next key (or at the mapping's end).
			if c := n.Content[i].HeadComment; c != "" {
				if i+2 < len(n.Content) {
					next := n.Content[i+2]
					next.HeadComment = strings.TrimSuffix(c+"\n"+next.HeadComment, "\n")
				} else {
					n.FootComment = strings.TrimSuffix(c+"\n"+n.FootComment, "\n")
				}
			}
			n.Content = append(n.Content[:i], n.Content[i+2:]...)
			return true
		}
	}
	return false
}

func mapReplace(n *yaml.Node, key string, v *yaml.Node) bool {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			n.Content[i+1] = v
			return true
		}
	}
	return false
}

// mapSet adds key: v to n, after the first of after that n has, else at
// the end.
func mapSet(n *yaml.Node, key string, v *yaml.Node, after ...string) {
	k := strNode(key)
	pos := len(n.Content)
	for _, a := range after {
		found := false
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == a {
				pos, found = i+2, true
				break
			}
		}
		if found {
			break
		}
	}
	n.Content = slices.Insert(n.Content, pos, k, v)
}

func strNode(s string) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s}
}

func setStr(n *yaml.Node, s string) {
	n.Kind, n.Tag, n.Value = yaml.ScalarNode, "!!str", s
}

// detectIndent returns the document's mapping indentation and whether its
// block sequences sit at their key's column ("key:\n- a").
func detectIndent(n *yaml.Node) (indent int, compact bool) {
	indent, seqFound := 0, false
	var walk func(n *yaml.Node)
	walk = func(n *yaml.Node) {
		if n.Kind == yaml.MappingNode {
			for i := 0; i+1 < len(n.Content); i += 2 {
				k, v := n.Content[i], n.Content[i+1]
				if indent == 0 && v.Kind == yaml.MappingNode && v.Style&yaml.FlowStyle == 0 && len(v.Content) > 0 && v.Line > k.Line {
					if d := v.Content[0].Column - k.Column; d > 0 {
						indent = d
					}
				}
				if !seqFound && v.Kind == yaml.SequenceNode && v.Style&yaml.FlowStyle == 0 && len(v.Content) > 0 && v.Line > k.Line {
					seqFound, compact = true, v.Column == k.Column
				}
			}
		}
		for _, c := range n.Content {
			walk(c)
		}
	}
	walk(n)
	if indent == 0 {
		indent = 2
	}
	return indent, compact
}
