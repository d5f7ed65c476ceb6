package cmd

import (
	"reflect"

	"github.com/prebake/prebake/internal/cacheprune"
	"github.com/prebake/prebake/internal/jsondoc"
	"github.com/prebake/prebake/internal/lockdiff"
	"github.com/prebake/prebake/internal/sbom"
	"github.com/prebake/prebake/layers"
	"github.com/prebake/prebake/pipeline/bundle"
	"github.com/prebake/prebake/pipeline/doctor"
	"github.com/prebake/prebake/pipeline/upgrade"
	"github.com/prebake/prebake/submit/rewrite"
)

// JSONDocs is the registry of every JSON document the CLI prints with -o
// json (and --result-file), in docs/json-output.md's order: the command,
// the Go type encoding/json marshals. The backends' are their adapters'
// (backendInfo), in newAdapters' order. hack/gendocs writes
// docs/schemas/NAME.schema.json from it; TestJSONGoldens runs each command
// and compares with testdata/json/NAME.json.
func JSONDocs() []jsondoc.Doc {
	t := func(name, command string, ty reflect.Type, note string) jsondoc.Doc {
		return jsondoc.Doc{Name: name, Command: command, Type: ty, Note: note}
	}
	docs := []jsondoc.Doc{
		t("error", "any command, on failure", jsondoc.TypeOf[jsondoc.Error](), "when the command has not printed its own result; --result-file holds it too"),
		t("resolve", "prebake resolve -o json", jsondoc.TypeOf[jsondoc.Resolve](), "tree and evicted are empty when the lock was used (fromLock)"),
		t("outdated", "prebake outdated -o json", jsondoc.TypeOf[jsondoc.Outdated](), ""),
		t("why", "prebake why -o json", jsondoc.TypeOf[jsondoc.Why](), ""),
		t("upgrade-report", "prebake upgrade-report -o json", jsondoc.TypeOf[upgrade.Report](), "base and kubernetes are absent without --base and a k8s:// argv"),
		t("lock-diff", "prebake lock diff -o json", jsondoc.TypeOf[lockdiff.Diff](), ""),
		t("keys", "prebake keys list -o json", jsondoc.TypeOf[jsondoc.Keys](), "keys add prints the keys it added"),
		t("init", "prebake init -o json", jsondoc.TypeOf[jsondoc.Init](), ""),
		t("doctor", "prebake doctor -o json", jsondoc.TypeOf[doctor.Report](), ""),
		t("rewrite", "prebake rewrite -o json", jsondoc.TypeOf[rewrite.Result](), ""),
		t("rewrite-manifest", "prebake rewrite --manifest FILE -o json", jsondoc.TypeOf[rewrite.ManifestResult](), ""),
		t("bundle-export", "prebake bundle export -o json", jsondoc.TypeOf[bundle.ExportResult](), ""),
		t("bundle-import", "prebake bundle import -o json", jsondoc.TypeOf[jsondoc.BundleImport](), ""),
		t("inspect", "prebake inspect -o json", jsondoc.TypeOf[layers.Info](), ""),
		t("bake-image", "prebake bake image -o json", jsondoc.TypeOf[jsondoc.BakeImage](), ""),
		t("bake-s3", "prebake bake s3 -o json", jsondoc.TypeOf[bakeS3JSON](), ""),
		t("warm", "prebake warm -o json", jsondoc.TypeOf[jsondoc.WarmOutput](), ""),
		t("gc", "prebake gc -o json", jsondoc.TypeOf[jsondoc.GCOutput](), ""),
		t("cache-prune", "prebake cache prune -o json", jsondoc.TypeOf[cacheprune.Report](), ""),
		t("sbom", "prebake sbom", jsondoc.TypeOf[sbom.BOM](), "CycloneDX 1.5; json is its only output"),
		{Name: "connect-add", Command: "prebake connect add -o json", Type: jsondoc.TypeOf[jsondoc.ConnectAdd](),
			NoGolden: "needs a Spark Connect server (test/spark runs the real one)"},
	}
	as := newAdapters()
	for _, a := range as {
		docs = append(docs, a.Describe().SubmitDocs...)
	}
	docs = append(docs, t("submit-batch", "prebake submit --batch FILE -o json", jsondoc.TypeOf[batchOutput](), ""))
	for _, a := range as {
		docs = append(docs, a.Describe().StatusDocs...)
	}
	return docs
}

// jsonCustom are the schemas of the types that marshal themselves.
var jsonCustom = map[reflect.Type]*jsondoc.Schema{
	jsondoc.TypeOf[rewrite.Warning](): {Type: jsondoc.Types{"string"}, Description: "the warning's text"},
}

// JSONSchema is the JSON Schema of d, reflected from its Go type.
func JSONSchema(d jsondoc.Doc) (*jsondoc.Schema, error) { return jsondoc.SchemaOf(d, jsonCustom) }
