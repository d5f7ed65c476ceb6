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
