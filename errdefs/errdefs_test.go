package errdefs

import (
	"errors"
	"fmt"
	"testing"
)

func TestKindIsAnErrorsIsTarget(t *testing.T) {
	err := fmt.Errorf("reading: %w", New(NotFound, errors.New("no such file")))
	if !errors.Is(err, NotFound) || errors.Is(err, Invalid) || errors.Is(err, Unknown) {
		t.Errorf("errors.Is on %v: want NotFound only", err)
	}
	if got, want := err.Error(), "reading: no such file"; got != want {
		t.Errorf("message %q, want %q (a kind adds no text)", got, want)
	}
	if k := KindOf(err); k != NotFound {
		t.Errorf("KindOf = %v, want %v", k, NotFound)
	}
	if k := KindOf(errors.New("plain")); k != Unknown {
		t.Errorf("KindOf(plain) = %v, want unknown", k)
	}
	if New(Invalid, nil) != nil {
		t.Error("New(k, nil) != nil")
	}
	var e *Error
	if !errors.As(Driver(3, errors.New("d")), &e) || e.Code != 3 || !e.Driver || e.Kind != DriverExit {
		t.Errorf("Driver(3): %+v", e)
	}
	if s := Kind(99).String(); s != "Kind(99)" {
		t.Errorf("Kind(99) = %q", s)
	}
}

func TestOptionError(t *testing.T) {
	err := fmt.Errorf("bake: %w", Optionf(BadArgument, "layers.BakeInput.Target", "target %q: a digest", "r@sha256:x"))
	if got, want := err.Error(), `bake: target "r@sha256:x": a digest`; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	if !errors.Is(err, BadArgument) {
		t.Error("errors.Is(err, BadArgument) = false")
	}
	var oe *OptionError
	if !errors.As(err, &oe) || oe.Option != "layers.BakeInput.Target" {
		t.Errorf("errors.As: %v", oe)
	}
	if got := OptionOf(err); got != "layers.BakeInput.Target" {
		t.Errorf("OptionOf = %q", got)
	}
	if got := OptionOf(errors.New("x")); got != "" {
		t.Errorf("OptionOf(plain) = %q", got)
	}
}
