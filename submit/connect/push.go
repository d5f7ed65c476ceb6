package connect

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/prebake/prebake/errdefs"
	"github.com/prebake/prebake/internal/redact"
)

// ChunkSize is the size of one artifact chunk, and the most a batch of
// small artifacts carries (pyspark ArtifactManager.CHUNK_SIZE).
const ChunkSize = 32 * 1024

const (
	methodAdd    = "/spark.connect.SparkConnectService/AddArtifacts"
	methodStatus = "/spark.connect.SparkConnectService/ArtifactStatus"
	receiptMagic = "prebake-connect-receipt v1"
)

// A Jar is one locked jar to push: its Spark-style file name, where it is
// here, and the sha256 and size the lock records.
type Jar struct {
	File   string
	Path   string
	Sha256 string
	Size   int64
}

// Jar actions in a Result.
const (
	ActionSent    = "sent"    // the jar's bytes went to the server
	ActionPresent = "present" // the session already had it (its receipt exists)
)

// JarResult is what Push did with one jar.
type JarResult struct {
	File     string `json:"file"`
	Sha256   string `json:"sha256"`
	Size     int64  `json:"size"`
	Artifact string `json:"artifact"` // jars/<file>
	Receipt  string `json:"receipt"`  // cache/<sha256 of the receipt>
	Action   string `json:"action"`   // sent | present
}

// Result is a Push: the session the jars are in, and the bytes sent.
type Result struct {
	Remote              string      `json:"remote"` // the connection string of the session, without a token
	SessionID           string      `json:"sessionId"`
	UserID              string      `json:"userId"`
	ServerSideSessionID string      `json:"serverSideSessionId,omitempty"`
	Jars                []JarResult `json:"jars"`
	Sent                int         `json:"sent"`
	Present             int         `json:"present"`
	JarBytesSent        int64       `json:"jarBytesSent"` // jar bytes only
	BytesSent           int64       `json:"bytesSent"`    // jar and receipt bytes
}

type options struct {
	clientType  string
	attempts    int
	backoff     time.Duration
	timeout     time.Duration
	callTimeout time.Duration
	logf        func(format string, args ...any)
}

// DefaultTimeout bounds a whole Push (WithTimeout); DefaultCallTimeout
// bounds each ArtifactStatus call and the wait for AddArtifacts' answer
// once the jars are sent (WithCallTimeout).
const (
	DefaultTimeout     = 10 * time.Minute
	DefaultCallTimeout = time.Minute
)

// An Option configures Push.
type Option func(*options) error

// WithClientType sets the client_type the requests carry (default
// "prebake").
func WithClientType(s string) Option { return func(o *options) error { o.clientType = s; return nil } }

// WithRetries sets how many times an RPC is tried while the server is
// unavailable (default 4), and the first pause (doubled each time).
func WithRetries(attempts int, backoff time.Duration) Option {
	return func(o *options) error { o.attempts, o.backoff = attempts, backoff; return nil }
}

// WithTimeout bounds the whole Push (default DefaultTimeout; 0: none):
// when it passes, Push ends with an errdefs.Timeout.
func WithTimeout(d time.Duration) Option { return func(o *options) error { o.timeout = d; return nil } }

// WithCallTimeout bounds each ArtifactStatus call, and the wait for the
// server's answer to AddArtifacts once everything is sent (default
// DefaultCallTimeout; 0: none): a server that never answers is an
// errdefs.Timeout.
func WithCallTimeout(d time.Duration) Option {
	return func(o *options) error { o.callTimeout = d; return nil }
}

// WithLogf sets where progress lines go.
func WithLogf(f func(format string, args ...any)) Option {
	return func(o *options) error { o.logf = f; return nil }
}

type pusher struct {
	o          *options
	conn       *grpc.ClientConn
	md         metadata.MD
	sessionID  string
	userID     string
	clientType string
	res        *Result
}

// Push adds jars to the session r names (r.SessionID; Push makes one when
// it is empty) as jars/<file>, so that they land on the session's class
// path: it asks ArtifactStatus for each jar's receipt, sends the jars
// without one (the lock's sha256 checked first), then the receipts of the
// jars whose CRC the server accepted. Errors carry errdefs kinds: a jar
// that does not match the lock is Invalid, gRPC's Unavailable is
// Unavailable, Unauthenticated and PermissionDenied are Denied, a deadline
// is Timeout.
func Push(ctx context.Context, r *Remote, jars []Jar, opts ...Option) (*Result, error) {
	o := &options{clientType: "prebake", attempts: 4, backoff: 500 * time.Millisecond, timeout: DefaultTimeout, callTimeout: DefaultCallTimeout,
		logf: func(string, ...any) {}}
	for _, f := range opts {
		if err := f(o); err != nil {
			return nil, err
		}
	}
	if o.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, o.timeout, fmt.Errorf("%w: the push took more than %s", errDeadline, o.timeout))
		defer cancel()
	}
	rr := *r
	if rr.SessionID == "" {
		rr.SessionID = NewSessionID()
	}
	var creds grpc.DialOption
	if rr.UseSSL {
		creds = grpc.WithTransportCredentials(credentials.NewTLS(&tls.Config{MinVersion: tls.VersionTLS12}))
	} else {
		creds = grpc.WithTransportCredentials(insecure.NewCredentials())
	}
	dopts := []grpc.DialOption{creds}
	if rr.UserAgent != "" {
		dopts = append(dopts, grpc.WithUserAgent(rr.UserAgent))
	}
	conn, err := grpc.NewClient(rr.Target(), dopts...)
	if err != nil {
		return nil, errdefs.Errorf(errdefs.BadArgument, "--remote %s: %v", rr.String(), err)
	}
	defer conn.Close()
	md := metadata.MD{}
	for k, v := range rr.Headers {
		md.Set(k, v)
	}
	if rr.Token != "" {
		md.Set("authorization", "Bearer "+rr.Token)
	}
	p := &pusher{o: o, conn: conn, md: md, sessionID: rr.SessionID, userID: rr.UserID, clientType: o.clientType,
		res: &Result{Remote: rr.String(), SessionID: rr.SessionID, UserID: rr.UserID, Jars: []JarResult{}}}
	return p.push(ctx, jars)
}

func (p *pusher) push(ctx context.Context, jars []Jar) (*Result, error) {
	ctx = metadata.NewOutgoingContext(ctx, p.md)
	receipts := make([][]byte, len(jars))
	names := make([]string, len(jars))
	for i, j := range jars {
		if j.File == "" || path.Base(j.File) != j.File || j.File == "." || j.File == ".." {
			return nil, errdefs.Errorf(errdefs.Invalid, "connect: jar file name %q is not a plain file name", j.File)
		}
		receipts[i] = []byte(fmt.Sprintf("%s\njars/%s\nsha256:%s\n", receiptMagic, j.File, j.Sha256))
		sum := sha256.Sum256(receipts[i])
		names[i] = "cache/" + hex.EncodeToString(sum[:])
	}
	have := map[string]bool{}
	if len(jars) > 0 {
		st, err := p.statuses(ctx, names)
		if err != nil {
			return nil, err
		}
		have = st.exists
	}
	var missing []int
	for i, j := range jars {
		jr := JarResult{File: j.File, Sha256: j.Sha256, Size: j.Size, Artifact: "jars/" + j.File, Receipt: names[i], Action: ActionPresent}
		if !have[names[i]] {
			jr.Action = ActionSent
			missing = append(missing, i)
		}
		p.res.Jars = append(p.res.Jars, jr)
	}
	for _, i := range missing {
		if err := checkJar(jars[i]); err != nil {
			return nil, err
		}
	}
	if len(missing) > 0 {
		arts := make([]artifact, len(missing))
		for k, i := range missing {
			arts[k] = artifact{name: "jars/" + jars[i].File, path: jars[i].Path, size: jars[i].Size}
		}
		sent, err := p.add(ctx, arts)
		if err != nil {
			return nil, err
		}
		p.res.JarBytesSent += sent
		rs := make([]artifact, len(missing))
		for k, i := range missing {
			rs[k] = artifact{name: names[i], data: receipts[i], size: int64(len(receipts[i]))}
		}
		rsent, err := p.add(ctx, rs)
		if err != nil {
			return nil, err
		}
		p.res.BytesSent = sent + rsent
	}
	p.res.Sent = len(missing)
	p.res.Present = len(jars) - len(missing)
	return p.res, nil
}

// checkJar checks that j's file is the one the lock records.
func checkJar(j Jar) error {
	f, err := os.Open(j.Path)
	if err != nil {
		return errdefs.New(errdefs.NotFound, fmt.Errorf("connect: jar %s: %w", j.File, err))
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return errdefs.New(errdefs.Invalid, fmt.Errorf("connect: reading jar %s: %w", j.File, err))
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != j.Sha256 || (j.Size > 0 && n != j.Size) {
		return errdefs.Errorf(errdefs.Invalid, "connect: jar %s is not the locked one: sha256 %s (%d bytes), the lock says %s (%d bytes)", j.File, got, n, j.Sha256, j.Size)
	}
	return nil
}

// statuses asks which names the session has.
func (p *pusher) statuses(ctx context.Context, names []string) (*statusResponse, error) {
	req := p.requestHead(fStatSession, fStatUser, fStatClientType)
	for _, n := range names {
		req = appendString(req, fStatNames, n)
	}
	var out *statusResponse
	err := p.retry(ctx, "ArtifactStatus", func() error {
		var resp []byte
		cctx, cancel := p.callContext(ctx)
		defer cancel()
		if err := p.conn.Invoke(cctx, methodStatus, req, &resp, grpc.ForceCodec(rawCodec{})); err != nil {
			return p.deadline(cctx, ctx, err)
		}
		r, err := parseStatusResponse(resp)
		if err != nil {
			return errdefs.New(errdefs.Invalid, err)
		}
		out = r
		return nil
	})
	if out != nil && out.serverSession != "" {
		p.res.ServerSideSessionID = redact.MessageN(out.serverSession, 256) // the server's
	}
	return out, err
}

// artifact is one artifact to add: a file (path) or bytes (data).
type artifact struct {
	name string
	path string
	data []byte
	size int64
}

// add sends arts in one AddArtifacts stream, as pyspark's ArtifactManager
// does: artifacts of at most ChunkSize bytes go in batches of at most
// ChunkSize bytes, a larger one as a chunked artifact (begin_chunk, then
// chunks), each chunk with its CRC32. It returns the artifact bytes sent;
// every artifact's CRC must come back accepted.
func (p *pusher) add(ctx context.Context, arts []artifact) (int64, error) {
	var sent int64
	err := p.retry(ctx, "AddArtifacts", func() error {
		sent = 0
		sctx, cancel := context.WithCancel(ctx)
		defer cancel()
		stream, err := p.conn.NewStream(sctx, &grpc.StreamDesc{ClientStreams: true}, methodAdd, grpc.ForceCodec(rawCodec{}))
		if err != nil {
			return err
		}
		send := func(body []byte) error {
			if err := stream.SendMsg(body); err != nil {
				if errors.Is(err, io.EOF) {
					// The server ended the stream: its status says why.
					var resp []byte
					return stream.RecvMsg(&resp)
				}
				return err
			}
			return nil
		}
		var batch []byte
		var batchSize int64
		flush := func() error {
			if len(batch) == 0 {
				return nil
			}
			req := appendBytes(p.requestHead(fAddSession, fAddUser, fAddClientType), fAddBatch, batch)
			batch, batchSize = nil, 0
			return send(req)
		}
		for _, a := range arts {
			data := a.data
			if data == nil && a.size <= ChunkSize {
				if data, err = readSmall(a); err != nil {
					return err
				}
			}
			if data != nil && int64(len(data)) <= ChunkSize {
				if batchSize+int64(len(data)) > ChunkSize {
					if err := flush(); err != nil {
						return err
					}
				}
				single := appendString(nil, fSingleName, a.name)
				single = appendBytes(single, fSingleData, chunkMsg(data, crc32.ChecksumIEEE(data)))
				batch = appendBytes(batch, fBatchArtifacts, single)
				batchSize += int64(len(data))
				sent += int64(len(data))
				continue
			}
			if err := flush(); err != nil {
				return err
			}
			n, err := p.sendChunked(a, send)
			sent += n
			if err != nil {
				return err
			}
		}
		if err := flush(); err != nil {
			return err
		}
		if err := stream.CloseSend(); err != nil {
			return err
		}
		var resp []byte
		if err := p.recvWithin(sctx, cancel, stream, &resp); err != nil {
			return p.deadline(sctx, ctx, err)
		}
		r, err := parseAddResponse(resp)
		if err != nil {
			return errdefs.New(errdefs.Invalid, err)
		}
		if r.serverSession != "" {
			p.res.ServerSideSessionID = redact.MessageN(r.serverSession, 256)
		}
		for _, a := range arts {
			if ok, seen := r.crcOK[a.name]; !seen || !ok {
				return errdefs.Errorf(errdefs.Unavailable, "connect: the server did not accept %s (CRC check failed or no summary): nothing of it was added", a.name)
			}
		}
		return nil
	})
	return sent, err
}

func readSmall(a artifact) ([]byte, error) {
	data, err := os.ReadFile(a.path)
	if err != nil {
		return nil, errdefs.New(errdefs.NotFound, fmt.Errorf("connect: %s: %w", a.name, err))
	}
	return data, nil
}

// sendChunked streams a file as begin_chunk (with the first chunk) and
// chunks.
func (p *pusher) sendChunked(a artifact, send func([]byte) error) (int64, error) {
	f, err := os.Open(a.path)
	if err != nil {
		return 0, errdefs.New(errdefs.NotFound, fmt.Errorf("connect: %s: %w", a.name, err))
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return 0, errdefs.New(errdefs.NotFound, fmt.Errorf("connect: %s: %w", a.name, err))
	}
	total := st.Size()
	numChunks := (total + ChunkSize - 1) / ChunkSize
	buf := make([]byte, ChunkSize)
	var sent int64
	for i := int64(0); i < numChunks; i++ {
		n, err := io.ReadFull(f, buf)
		if err != nil && !(errors.Is(err, io.ErrUnexpectedEOF) && i == numChunks-1) {
			return sent, errdefs.New(errdefs.Invalid, fmt.Errorf("connect: reading %s: %w", a.name, err))
		}
		chunk := chunkMsg(buf[:n], crc32.ChecksumIEEE(buf[:n]))
		req := p.requestHead(fAddSession, fAddUser, fAddClientType)
		if i == 0 {
			begin := appendString(nil, fBeginName, a.name)
			begin = appendVarint(begin, fBeginTotal, uint64(total))
			begin = appendVarint(begin, fBeginChunks, uint64(numChunks))
			begin = appendBytes(begin, fBeginInitial, chunk)
			req = appendBytes(req, fAddBeginChunk, begin)
		} else {
			req = appendBytes(req, fAddChunk, chunk)
		}
		if err := send(req); err != nil {
			return sent, err
		}
		sent += int64(n)
	}
	return sent, nil
}

// errDeadline is the cause of a Push's or a call's deadline.
var errDeadline = errors.New("no answer in time")

// callContext is ctx bounded by the call timeout.
func (p *pusher) callContext(ctx context.Context) (context.Context, context.CancelFunc) {
	if p.o.callTimeout <= 0 {
		return context.WithCancel(ctx)
	}
	return context.WithTimeoutCause(ctx, p.o.callTimeout, fmt.Errorf("%w: the server did not answer within %s", errDeadline, p.o.callTimeout))
}

// recvWithin waits for the stream's answer at most the call timeout:
// past it, cancel (the stream's) ends the wait.
func (p *pusher) recvWithin(sctx context.Context, cancel context.CancelFunc, stream grpc.ClientStream, resp *[]byte) error {
	var fired atomic.Bool
	if p.o.callTimeout > 0 {
		t := time.AfterFunc(p.o.callTimeout, func() { fired.Store(true); cancel() })
		defer t.Stop()
	}
	err := stream.RecvMsg(resp)
	if err != nil && fired.Load() {
		return errdefs.Errorf(errdefs.Timeout, "connect: AddArtifacts: %v: the server did not answer within %s of the last artifact", errDeadline, p.o.callTimeout)
	}
	return err
}

// deadline is err, or the deadline that ended it (a call's, cctx; the
// push's, ctx) as an errdefs.Timeout saying which.
func (p *pusher) deadline(cctx, ctx context.Context, err error) error {
	if status.Code(err) == codes.DeadlineExceeded {
		// The server may see the deadline (sent as grpc-timeout) a moment
		// before this side does: wait for ours when it is that close.
		if dl, ok := cctx.Deadline(); ok && time.Until(dl) < time.Second {
			<-cctx.Done()
		}
	}
	for _, c := range []context.Context{ctx, cctx} {
		if c.Err() != nil && errors.Is(context.Cause(c), errDeadline) {
			return errdefs.New(errdefs.Timeout, fmt.Errorf("connect: %w", context.Cause(c)))
		}
	}
	return err
}

// retry runs f until it succeeds, fails with anything but Unavailable, or
// has been tried o.attempts times; the gRPC status is mapped to an
// errdefs kind.
func (p *pusher) retry(ctx context.Context, rpc string, f func() error) error {
	wait := p.o.backoff
	var err error
	for i := 0; i < max(1, p.o.attempts); i++ {
		if err = f(); err == nil {
			return nil
		}
		if status.Code(err) != codes.Unavailable {
			break
		}
		if i == p.o.attempts-1 {
			return classify(rpc, err, fmt.Sprintf(" (after %d attempts)", p.o.attempts))
		}
		p.o.logf("connect: %s: %s; retrying in %s", rpc, redact.Message(status.Convert(err).Message()), wait)
		select {
		case <-ctx.Done():
			return errdefs.New(errdefs.Timeout, fmt.Errorf("connect: %s: %w", rpc, context.Cause(ctx)))
		case <-time.After(wait):
		}
		wait *= 2
	}
	return classify(rpc, err, "")
}

// classify maps a gRPC status to an errdefs kind; suffix ends the message.
func classify(rpc string, err error, suffix string) error {
	if errdefs.KindOf(err) != errdefs.Unknown {
		return err
	}
	st, ok := status.FromError(err)
	if !ok {
		return errdefs.New(errdefs.Unavailable, fmt.Errorf("connect: %s: %w", rpc, redact.CutError(err)))
	}
	kind := errdefs.Unavailable
	switch st.Code() {
	case codes.Unauthenticated, codes.PermissionDenied:
		kind = errdefs.Denied
	case codes.DeadlineExceeded:
		kind = errdefs.Timeout
	case codes.Canceled:
		kind = errdefs.Timeout
	case codes.NotFound:
		kind = errdefs.NotFound
	case codes.InvalidArgument, codes.AlreadyExists, codes.FailedPrecondition, codes.OutOfRange:
		kind = errdefs.Invalid
	}
	msg := redact.Message(st.Message()) // the server's: it may quote a secret, and be megabytes long
	if st.Code() == codes.Unimplemented {
		msg += " (a Spark Connect server older than 3.5 has no ArtifactStatus)"
	}
	return errdefs.New(kind, fmt.Errorf("connect: %s: %s: %s%s", rpc, st.Code(), msg, suffix))
}

// rawCodec sends and receives messages as the bytes protowire made: the
// content type stays application/grpc+proto.
type rawCodec struct{}

func (rawCodec) Name() string { return "proto" }

func (rawCodec) Marshal(v any) ([]byte, error) {
	b, ok := v.([]byte)
	if !ok {
		return nil, fmt.Errorf("rawCodec: cannot marshal %T", v)
	}
	return b, nil
}

func (rawCodec) Unmarshal(data []byte, v any) error {
	b, ok := v.(*[]byte)
	if !ok {
		return fmt.Errorf("rawCodec: cannot unmarshal into %T", v)
	}
	*b = append([]byte(nil), data...)
	return nil
}
