package s3store

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/feature/s3/transfermanager"
	tmtypes "github.com/aws/aws-sdk-go-v2/feature/s3/transfermanager/types"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go"
	"github.com/aws/smithy-go/logging"

	"github.com/prebake/prebake/errdefs"
	"github.com/prebake/prebake/internal/noanswer"
	"github.com/prebake/prebake/internal/redact"
	"github.com/prebake/prebake/internal/redirect"
)

// s3API is the part of *s3.Client the backend uses.
type s3API interface {
	transfermanager.S3APIClient
	DeleteObject(context.Context, *s3.DeleteObjectInput, ...func(*s3.Options)) (*s3.DeleteObjectOutput, error)
	ListMultipartUploads(context.Context, *s3.ListMultipartUploadsInput, ...func(*s3.Options)) (*s3.ListMultipartUploadsOutput, error)
}

type s3Backend struct {
	bucket   string
	client   s3API
	presign  *s3.PresignClient
	tm       *transfermanager.Client
	o        *options
	endpoint *url.URL // nil for AWS
	region   string
}

var _ backend = (*s3Backend)(nil)

func newS3Backend(ctx context.Context, bucket string, o *options) (*s3Backend, error) {
	load := []func(*config.LoadOptions) error{
		config.WithLogger(logging.Nop{}),
		config.WithRetryer(func() aws.Retryer {
			return retry.NewStandard(func(so *retry.StandardOptions) {
				so.MaxAttempts = o.maxAttempts
				so.MaxBackoff = o.maxBackoff
				// No client-side retry quota: a burst of 503 SlowDown must be
				// backed off and retried, not turned into "quota exceeded".
				so.RateLimiter = ratelimit.None
			})
		}),
	}
	if o.region != "" {
		load = append(load, config.WithRegion(o.region))
	}
	if o.accessKey != "" {
		load = append(load, config.WithCredentialsProvider(credentials.NewStaticCredentialsProvider(o.accessKey, o.secretKey, "")))
	}
	cfg, err := config.LoadDefaultConfig(ctx, load...)
	if err != nil {
		return nil, errdefs.Errorf(errdefs.BadArgument, "loading the AWS configuration for bucket %s: %w", bucket, err)
	}
	if cfg.Region == "" {
		cfg.Region = "us-east-1"
	}
	b := &s3Backend{bucket: bucket, o: o, region: cfg.Region}
	if o.endpoint != "" {
		b.endpoint, _ = url.Parse(o.endpoint)
	}
	client := s3.NewFromConfig(cfg, func(so *s3.Options) {
		if o.endpoint != "" {
			so.BaseEndpoint = aws.String(o.endpoint)
		}
		so.UsePathStyle = o.pathStyle
		so.HTTPClient = answerTimeoutClient{c: o.client(cfg.HTTPClient), d: o.respTimeout}
		so.DisableLogOutputChecksumValidationSkipped = true
	})
	b.client = client
	b.presign = s3.NewPresignClient(client)
	b.tm = transfermanager.New(client, func(to *transfermanager.Options) {
		to.Concurrency = o.concurrency
		to.PartSizeBytes = o.partSize
		to.MultipartUploadThreshold = o.threshold
		to.ChecksumAlgorithm = tmtypes.ChecksumAlgorithmSha256
		// Abort a failed multipart upload with a fresh context, so a
		// cancelled one (Ctrl-C, SIGTERM) leaves no orphan parts either.
		to.FailTimeout = 30 * time.Second
	})
	return b, nil
}

// client is the HTTP client of the SDK: WithHTTPClient's or the SDK's
// default transport with the response timeout, under o.slow, following
// only a 307/308 to the same origin (the SigV4 Authorization never goes to
// another host:port; the SDK's own client follows a 307 of a GET there).
// The default transport is loaded's (the AWS configuration's, which holds
// AWS_CA_BUNDLE's roots) when it is the SDK's buildable client.
func (o *options) client(loaded aws.HTTPClient) *http.Client {
	var c http.Client
	if o.httpClient != nil {
		c = *o.httpClient
	} else {
		bc, ok := loaded.(*awshttp.BuildableClient)
		if !ok || bc == nil {
			bc = awshttp.NewBuildableClient()
		}
		tr := bc.GetTransport()
		tr.ResponseHeaderTimeout = o.respTimeout
		c.Transport = tr
	}
	if c.Transport == nil {
		c.Transport = http.DefaultTransport
	}
	c.Transport = noanswer.SlowTransport{RT: c.Transport, Limits: o.slow}
	if c.CheckRedirect == nil {
		c.CheckRedirect = redirect.SameOriginOnly
	}
	return &c
}

// s3Kind: a GET (a manifest, a listing), HEAD or DELETE is Small; an
// upload is not limited here (a CompleteMultipartUpload may send
// whitespace for minutes before its answer).
func s3Kind(r *http.Request) noanswer.Kind {
	switch r.Method {
	case http.MethodGet, http.MethodHead, http.MethodDelete:
		return noanswer.Small
	}
	return noanswer.Pass
}

// answerTimeoutClient wraps the SDK's HTTP client so that a server that
// sends no response headers within d is a retryable *noanswer.Error, not
// the caller's deadline (see internal/noanswer).
type answerTimeoutClient struct {
	c interface {
		Do(*http.Request) (*http.Response, error)
	}
	d time.Duration
}

func (c answerTimeoutClient) Do(r *http.Request) (*http.Response, error) {
	resp, err := c.c.Do(r)
	if err = noanswer.Wrap(r, "", c.d, err); err != nil {
		return nil, err
	}
	return resp, nil
}

func (b *s3Backend) name(key string) string { return "s3://" + b.bucket + "/" + key }

func (b *s3Backend) head(ctx context.Context, key string) (int64, error) {
	out, err := b.client.HeadObject(ctx, &s3.HeadObjectInput{Bucket: &b.bucket, Key: &key})
	if err != nil {
		return 0, b.wrap("HEAD", key, err)
	}
	return aws.ToInt64(out.ContentLength), nil
}

func (b *s3Backend) get(ctx context.Context, key string) ([]byte, error) {
	out, err := b.client.GetObject(ctx, &s3.GetObjectInput{Bucket: &b.bucket, Key: &key})
	if err != nil {
		return nil, b.wrap("GET", key, err)
	}
	defer out.Body.Close()
	data, err := io.ReadAll(io.LimitReader(out.Body, maxGetSize+1))
	if err != nil {
		return nil, b.wrap("GET", key, err)
	}
	if len(data) > maxGetSize {
		return nil, tooLargeErr(b.name(key))
	}
	return data, nil
}

func (b *s3Backend) putFile(ctx context.Context, key, file string, body io.Reader, size int64, sha string) error {
	// The transfer manager reads body once, in order, into its single-PUT
	// buffer or its part buffers (retries resend those), so a counting
	// body counts each byte once.
	in := &transfermanager.UploadObjectInput{
		Bucket:        &b.bucket,
		Key:           &key,
		Body:          body,
		ContentLength: aws.Int64(size),
		ContentType:   aws.String("application/java-archive"),
		IfNoneMatch:   aws.String("*"),
	}
	if size < b.o.threshold {
		// One PUT: the server checks the whole object's SHA-256. Multipart
		// uploads carry SHA-256 per part instead (S3 has no full-object
		// SHA-256 for them).
		raw, err := hex.DecodeString(sha)
		if err != nil {
			return errdefs.Errorf(errdefs.Invalid, "sha256 %q of %s: %w", sha, file, err)
		}
		in.ChecksumSHA256 = aws.String(base64.StdEncoding.EncodeToString(raw))
	}
	if _, err := b.tm.UploadObject(ctx, in); err != nil {
		return b.wrap("PUT", key, err)
	}
	return nil
}

func (b *s3Backend) putBytes(ctx context.Context, key string, data []byte) error {
	_, err := b.client.PutObject(ctx, &s3.PutObjectInput{
		Bucket:            &b.bucket,
		Key:               &key,
		Body:              bytes.NewReader(data),
		ContentLength:     aws.Int64(int64(len(data))),
		ContentType:       aws.String("application/json"),
		IfNoneMatch:       aws.String("*"),
		ChecksumAlgorithm: "SHA256",
	})
	if err != nil {
		return b.wrap("PUT", key, err)
	}
	return nil
}

func (b *s3Backend) url(ctx context.Context, key string, style URLStyle, expires time.Duration) (string, error) {
	switch style {
	case StyleS3A:
		return "s3a://" + b.bucket + "/" + escapeKey(key), nil
	case StyleHTTPS:
		return b.httpsURL(key), nil
	case StylePresigned:
		req, err := b.presign.PresignGetObject(ctx, &s3.GetObjectInput{Bucket: &b.bucket, Key: &key}, s3.WithPresignExpires(expires))
		if err != nil {
			// The error of a presign call holds no signature; it names the key.
			return "", b.wrap("presigning", key, err)
		}
		return req.URL, nil
	}
	return "", CheckStyle(style)
}

// httpsURL is the object's plain URL, in the addressing style of the client.
func (b *s3Backend) httpsURL(key string) string {
	scheme, host := "https", "s3."+b.region+".amazonaws.com"
	if b.endpoint != nil {
		scheme, host = b.endpoint.Scheme, b.endpoint.Host
	}
	if b.o.pathStyle {
		return scheme + "://" + host + "/" + b.bucket + "/" + escapeKey(key)
	}
	return scheme + "://" + b.bucket + "." + host + "/" + escapeKey(key)
}

func escapeKey(key string) string {
	parts := strings.Split(key, "/")
	for i, p := range parts {
		parts[i] = url.PathEscape(p)
	}
	return strings.Join(parts, "/")
}

func (b *s3Backend) list(ctx context.Context, prefix string) ([]object, error) {
	var objs []object
	p := s3.NewListObjectsV2Paginator(b.client, &s3.ListObjectsV2Input{Bucket: &b.bucket, Prefix: &prefix})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, b.wrap("LIST", prefix, err)
		}
		for _, c := range page.Contents {
			objs = append(objs, object{Key: aws.ToString(c.Key), Size: aws.ToInt64(c.Size), ModTime: aws.ToTime(c.LastModified)})
		}
	}
	return objs, nil
}

// maxUploadPages bounds the listing of multipart uploads (1,000 a page).
const maxUploadPages = 100

func (b *s3Backend) uploads(ctx context.Context, prefix string) ([]upload, error) {
	var ups []upload
	in := &s3.ListMultipartUploadsInput{Bucket: &b.bucket, Prefix: &prefix}
	for range maxUploadPages {
		page, err := b.client.ListMultipartUploads(ctx, in)
		if err != nil {
			return nil, b.wrap("LIST uploads", prefix, err)
		}
		for _, u := range page.Uploads {
			key := aws.ToString(u.Key)
			if !strings.HasPrefix(key, prefix) {
				continue // a server that ignored the prefix
			}
			ups = append(ups, upload{Key: key, ID: aws.ToString(u.UploadId), Initiated: aws.ToTime(u.Initiated)})
		}
		if !aws.ToBool(page.IsTruncated) || (aws.ToString(page.NextKeyMarker) == "" && aws.ToString(page.NextUploadIdMarker) == "") {
			break
		}
		in.KeyMarker, in.UploadIdMarker = page.NextKeyMarker, page.NextUploadIdMarker
	}
	return ups, nil
}

func (b *s3Backend) abort(ctx context.Context, u upload) error {
	_, err := b.client.AbortMultipartUpload(ctx, &s3.AbortMultipartUploadInput{Bucket: &b.bucket, Key: &u.Key, UploadId: &u.ID})
	if err == nil {
		return nil
	}
	if err := b.wrap("ABORT upload", u.Key, err); !errors.Is(err, ErrNotFound) {
		return err
	}
	return nil
}

func (b *s3Backend) remove(ctx context.Context, key string) error {
	if _, err := b.client.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: &b.bucket, Key: &key}); err != nil {
		return b.wrap("DELETE", key, err)
	}
	return nil
}

// wrap names the bucket and key, and maps an S3 error to an exit code and
// the package's sentinels.
func (b *s3Backend) wrap(op, key string, err error) error {
	loc := b.name(key)
	code, why, sentinel := classify(err)
	err = redact.CutError(err) // a server's message may be megabytes long
	if sentinel != nil {
		err = fmt.Errorf("%w: %w", sentinel, err)
	}
	msg := fmt.Errorf("%s %s: %s: %w", op, loc, why, err)
	if why == "" {
		msg = fmt.Errorf("%s %s: %w", op, loc, err)
	}
	return errdefs.New(code, msg)
}

// classify maps an SDK error to a kind, a sentinel and a short reason.
func classify(err error) (code errdefs.Kind, why string, sentinel error) {
	var ae smithy.APIError
	apiCode := ""
	if errors.As(err, &ae) {
		apiCode = ae.ErrorCode()
	}
	status := 0
	var se interface{ HTTPStatusCode() int }
	if errors.As(err, &se) {
		status = se.HTTPStatusCode()
	}
	switch {
	case errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded):
		return errdefs.Timeout, "interrupted", nil
	case apiCode == "InvalidAccessKeyId" || apiCode == "SignatureDoesNotMatch" || apiCode == "AccessDenied" ||
		apiCode == "ExpiredToken" || apiCode == "InvalidToken" ||
		apiCode == "XAdminUserNotFound" || // versitygw: an unknown access key
		status == 401 || status == 403:
		return errdefs.Denied, "permission denied (check the AWS credentials in the environment, profile or web identity)", nil
	case apiCode == "NoSuchBucket":
		return errdefs.NotFound, "the bucket does not exist", ErrNoBucket
	case apiCode == "NoSuchKey" || apiCode == "NotFound" || status == 404:
		return errdefs.NotFound, "", ErrNotFound
	case apiCode == "PreconditionFailed" || status == 412:
		return errdefs.Internal, "", ErrExists
	case isNoCredentials(err):
		return errdefs.Denied, "no AWS credentials found (env AWS_ACCESS_KEY_ID, a profile, or web identity)", nil
	case status >= 500 || apiCode == "SlowDown" || apiCode == "ServiceUnavailable":
		return errdefs.Unavailable, "S3 is unavailable after retries", nil
	case isSlow(err):
		return errdefs.Unavailable, "S3 answered too slowly after retries", nil
	case status == 0:
		// No HTTP response: connection refused or reset after retries.
		return errdefs.Unavailable, "S3 is unreachable after retries", nil
	}
	return errdefs.Unavailable, "", nil
}

func isSlow(err error) bool {
	var se *noanswer.SlowError
	return errors.As(err, &se)
}

func isNoCredentials(err error) bool {
	return strings.Contains(err.Error(), "failed to retrieve credentials") ||
		strings.Contains(err.Error(), "no EC2 IMDS role found") ||
		strings.Contains(err.Error(), "get credentials")
}
