package cmd

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestAdaptersDeclareOnce checks that newAdapters, the one list of the
// backends, builds consistent lists: one adapter per kind, one document
// per name, and no option hint that two adapters declare, which
// withBackendHints would overwrite silently.
func TestAdaptersDeclareOnce(t *testing.T) {
	kinds := map[string]bool{}
	hints := map[string]string{}
	for _, a := range newAdapters() {
		info := a.Describe()
		if info.Kind == "" || kinds[string(info.Kind)] {
			t.Errorf("%T: kind %q empty or declared twice", a, info.Kind)
		}
		kinds[string(info.Kind)] = true
		if got := newAdapters().of(info.Kind); got == nil || got.Describe().Kind != info.Kind {
			t.Errorf("adapters.of(%q) = %T", info.Kind, got)
		}
		if len(info.IDExamples) > 0 && len(info.IDMasters) == 0 {
			t.Errorf("%T: status examples but no status masters", a)
		}
		for opt, h := range info.OptionHints {
			if prev, ok := hints[opt]; ok {
				t.Errorf("%T: option hint %q declared twice (%q, %q)", a, opt, prev, h)
			}
			hints[opt] = h
		}
	}
	// Every backend hint made it into optionHints unchanged.
	for opt, h := range hints {
		if diff := cmp.Diff(h, optionHints[opt]); diff != "" {
			t.Errorf("optionHints[%q] (-adapter +optionHints):\n%s", opt, diff)
		}
	}
	names := map[string]bool{}
	for _, d := range JSONDocs() {
		if names[d.Name] {
			t.Errorf("JSON document %q declared twice", d.Name)
		}
		names[d.Name] = true
	}
	if got, want := newAdapters().idMasters(), "k8s://…, spark://… or mesos://…"; got != want {
		t.Errorf("idMasters() = %q, want %q", got, want)
	}
}
