package pipeline

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/prebake/prebake/resolver"
	"github.com/prebake/prebake/submit"
)

func TestRequestForPutsTheArgvFirst(t *testing.T) {
	base := resolver.Request{Packages: []string{"a:b:1"}, Repositories: []string{"https://r1/"}, Excludes: []string{"x:y"}}
	for _, tc := range []struct {
		name string
		p    submit.Packages
		want resolver.Request
	}{
		{"no argv packages", submit.Packages{}, base},
		{"argv first", submit.Packages{Packages: "c:d:2", Repositories: "https://r0/", Excludes: "z:w"},
			resolver.Request{Packages: []string{"c:d:2", "a:b:1"}, Repositories: []string{"https://r0/", "https://r1/"}, Excludes: []string{"z:w", "x:y"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := RequestFor(base, tc.p)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	if diff := cmp.Diff([]string{"a:b:1"}, base.Packages); diff != "" {
		t.Errorf("RequestFor changed its input (-want +got):\n%s", diff)
	}
}
