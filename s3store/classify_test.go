package s3store

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"

	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/prebake/prebake/internal/exitcode"
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
		code     int
		sentinel error
	}{
		{apiErr(403, "AccessDenied"), exitcode.NoPerm, nil},
		{apiErr(403, "InvalidAccessKeyId"), exitcode.NoPerm, nil},
		{apiErr(403, "SignatureDoesNotMatch"), exitcode.NoPerm, nil},
		{apiErr(403, ""), exitcode.NoPerm, nil},
		{apiErr(404, "NoSuchBucket"), exitcode.NotFound, ErrNoBucket},
		{apiErr(404, "NoSuchKey"), exitcode.NotFound, ErrNotFound},
		{apiErr(404, "NotFound"), exitcode.NotFound, ErrNotFound},
		{apiErr(412, "PreconditionFailed"), exitcode.Internal, ErrExists},
		{apiErr(503, "SlowDown"), exitcode.Unavailable, nil},
		{apiErr(500, "InternalError"), exitcode.Unavailable, nil},
		{fmt.Errorf("dial tcp: connection refused"), exitcode.Unavailable, nil},
		{fmt.Errorf("put: %w", context.Canceled), exitcode.Timeout, nil},
	} {
		b := &s3Backend{bucket: "bkt"}
		err := b.wrap("PUT", "p/key", tc.err)
		if got := exitcode.Code(err); got != tc.code {
			t.Errorf("%v: code %d, want %d", tc.err, got, tc.code)
		}
		if tc.sentinel != nil && !errors.Is(err, tc.sentinel) {
			t.Errorf("%v: does not match %v", tc.err, tc.sentinel)
		}
		if want := "PUT s3://bkt/p/key: "; err.Error()[:len(want)] != want {
			t.Errorf("%v: message %q does not name bucket and key", tc.err, err)
		}
	}
}
