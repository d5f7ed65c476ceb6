// Package depcheck enforces the import direction between prebake's packages.
package depcheck

import (
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/prebake/prebake"

// deps lists the packages (transitively) imported by pkg.
func deps(t *testing.T, pkg string) []string {
	t.Helper()
	out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", module+"/"+pkg).Output()
	if err != nil {
		t.Fatalf("go list %s: %v", pkg, err)
	}
	return strings.Fields(string(out))
}

func TestImportDirection(t *testing.T) {
	// Each package may import only the listed prebake packages (transitively).
	allowed := map[string][]string{
		"maven":    {"maven"},
		"resolver": {"resolver", "maven", "internal/"},
		"layers":   {"layers", "resolver", "maven", "internal/"},
		"s3store":  {"s3store", "resolver", "maven", "internal/"},
	}
	// Each SDK lives in one package.
	sdk := map[string]string{
		"github.com/google/go-containerregistry": "layers",
		"github.com/aws/aws-sdk-go-v2":           "s3store",
		"k8s.io/client-go":                       "submit",
	}
	for pkg, ok := range allowed {
		for _, d := range deps(t, pkg) {
			if !strings.HasPrefix(d, module+"/") {
				for s, owner := range sdk {
					if strings.HasPrefix(d, s) && owner != pkg {
						t.Errorf("%s imports %s, which belongs in %s only", pkg, d, owner)
					}
				}
				continue
			}
			rel := strings.TrimPrefix(d, module+"/")
			good := false
			for _, a := range ok {
				if rel == a || strings.HasPrefix(rel, a+"/") || (strings.HasSuffix(a, "/") && strings.HasPrefix(rel, a)) {
					good = true
				}
			}
			if !good {
				t.Errorf("%s must not import %s", pkg, d)
			}
		}
	}
}
