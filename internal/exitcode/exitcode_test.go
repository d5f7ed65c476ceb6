package exitcode

import (
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/prebake/prebake/errdefs"
)

func TestCodeClassifiesKinds(t *testing.T) {
	type got struct {
		Code   int
		Source string
	}
	for _, tc := range []struct {
		name string
		err  error
		want got
	}{
		{"nil", nil, got{OK, SourcePrebake}},
		{"plain", errors.New("x"), got{Internal, SourcePrebake}},
		{"invalid", errdefs.Errorf(errdefs.Invalid, "bad"), got{DataErr, SourcePrebake}},
		{"wrapped not found", fmt.Errorf("a: %w", errdefs.New(errdefs.NotFound, errors.New("b"))), got{NotFound, SourcePrebake}},
		{"outermost wins", errdefs.New(errdefs.CantWrite, errdefs.New(errdefs.NotFound, errors.New("b"))), got{CantCreate, SourcePrebake}},
		{"unknown makes no claim", errdefs.New(errdefs.Unknown, New(StaleLock, errors.New("b"))), got{StaleLock, SourcePrebake}},
		{"cli code outside", New(Usage, errdefs.New(errdefs.NotFound, errors.New("b"))), got{Usage, SourcePrebake}},
		{"joined", errors.Join(errors.New("a"), errdefs.New(errdefs.Timeout, errors.New("b"))), got{Timeout, SourcePrebake}},
		{"driver exit", errdefs.Driver(3, errors.New("d")), got{3, SourceDriver}},
		{"driver failed", errdefs.DriverError(errors.New("d")), got{DriverFailed, SourceDriver}},
		{"prebake cancel", errdefs.New(errdefs.DriverFailed, errors.New("d")), got{DriverFailed, SourcePrebake}},
		{"denied", errdefs.New(errdefs.Denied, errors.New("d")), got{NoPerm, SourcePrebake}},
		{"rate limited", errdefs.New(errdefs.RateLimited, errors.New("d")), got{RateLimited, SourcePrebake}},
		{"unavailable", errdefs.New(errdefs.Unavailable, errors.New("d")), got{Unavailable, SourcePrebake}},
		{"bad argument", errdefs.New(errdefs.BadArgument, errors.New("d")), got{Usage, SourcePrebake}},
		{"stale", errdefs.New(errdefs.Stale, errors.New("d")), got{StaleLock, SourcePrebake}},
		{"hung", errdefs.New(errdefs.Hung, errors.New("d")), got{Hung, SourcePrebake}},
		{"internal", errdefs.New(errdefs.Internal, errors.New("d")), got{Internal, SourcePrebake}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, got{Code(tc.err), SourceOf(tc.err)}); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestEveryKindHasACode(t *testing.T) {
	for k := errdefs.BadArgument; k < errdefs.DriverExit; k++ {
		if _, ok := kindCodes[k]; !ok {
			t.Errorf("kind %v has no exit code", k)
		}
	}
}
