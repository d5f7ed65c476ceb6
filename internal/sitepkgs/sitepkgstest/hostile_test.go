package sitepkgstest

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/prebake/prebake/errdefs"
	"github.com/prebake/prebake/internal/wheel"
)

// TestHostileWheels: each is refused by wheel.Check for its reason,
// naming the wheel and the member (the fixtures other tests rely on).
func TestHostileWheels(t *testing.T) {
	const file = "evil-1.0-py3-none-any.whl"
	good := Wheel(t, "evil", "1.0", File{Name: "evil/__init__.py", Body: "X = 1\n"})
	if err := wheel.Check(context.Background(), bytes.NewReader(good), int64(len(good)), file); err != nil {
		t.Fatalf("the good wheel: %v", err)
	}
	for _, h := range HostileWheels(t, "evil", "1.0") {
		err := wheel.Check(context.Background(), bytes.NewReader(h.Data), int64(len(h.Data)), file)
		if !errors.Is(err, h.Want) || !errors.Is(err, errdefs.Invalid) || !strings.Contains(err.Error(), file) || !strings.Contains(err.Error(), h.Says) {
			t.Errorf("%s: %v, want %v (invalid) naming %s and %q", h.Case, err, h.Want, file, h.Says)
		}
	}
}
