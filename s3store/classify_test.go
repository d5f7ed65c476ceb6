package s3store

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"

	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"
	"github.com/prebake/prebake/errdefs"
)

func apiErr(status int, code string) error {
	return &smithy.OperationError{ServiceID: "S3", OperationName: "PutObject", Err: &smithyhttp.ResponseError{
		Response: &smithyhttp.Response{Response: &http.Response{StatusCode: status}},
		Err:      &smithy.GenericAPIError{Code: code, Message: "m"},
	}}
}

func TestClassify(t *testing.T) {
	for _, tc := range []struct {
		err      error
		kind     errdefs.Kind
		sentinel error
	}{
		{apiErr(403, "AccessDenied"), errdefs.Denied, nil},
		{apiErr(403, "InvalidAccessKeyId"), errdefs.Denied, nil},
		{apiErr(403, "SignatureDoesNotMatch"), errdefs.Denied, nil},
		{apiErr(403, ""), errdefs.Denied, nil},
		{apiErr(404, "NoSuchBucket"), errdefs.NotFound, ErrNoBucket},
		{apiErr(404, "NoSuchKey"), errdefs.NotFound, ErrNotFound},
		{apiErr(404, "NotFound"), errdefs.NotFound, ErrNotFound},
		{apiErr(412, "PreconditionFailed"), errdefs.Internal, ErrExists},
		{apiErr(503, "SlowDown"), errdefs.Unavailable, nil},
		{apiErr(500, "InternalError"), errdefs.Unavailable, nil},
		{fmt.Errorf("dial tcp: connection refused"), errdefs.Unavailable, nil},
		{fmt.Errorf("put: %w", context.Canceled), errdefs.Timeout, nil},
	} {
		b := &s3Backend{bucket: "bkt"}
		err := b.wrap("PUT", "p/key", tc.err)
		if got := errdefs.KindOf(err); got != tc.kind {
			t.Errorf("%v: kind %v, want %v", tc.err, got, tc.kind)
		}
		if tc.sentinel != nil && !errors.Is(err, tc.sentinel) {
			t.Errorf("%v: does not match %v", tc.err, tc.sentinel)
		}
		if want := "PUT s3://bkt/p/key: "; err.Error()[:len(want)] != want {
			t.Errorf("%v: message %q does not name bucket and key", tc.err, err)
		}
	}
}
