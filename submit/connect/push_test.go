package connect

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"hash/crc32"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/prebake/prebake/errdefs"
)

// artifactServer is the server side of the two RPCs as Spark's handlers
// read them (SparkConnectAddArtifactsHandler, ArtifactStatusesHandler):
// batches and chunked artifacts reassembled and CRC-checked, statuses only
// for cache/ names. It is for the unit test of the wire format; the tests in
// test/spark run the real server.
type artifactServer struct {
	mu        sync.Mutex
	artifacts map[string][]byte
	requests  int
}

func (s *artifactServer) handle(_ any, stream grpc.ServerStream) error {
	method, _ := grpc.MethodFromServerStream(stream)
	switch method {
	case methodStatus:
		var req []byte
		if err := stream.RecvMsg(&req); err != nil {
			return err
		}
		var resp []byte
		_ = fields(req, func(num protowire.Number, _ protowire.Type, v []byte, _ uint64) error {
			if num == fStatNames {
				s.mu.Lock()
				_, ok := s.artifacts[string(v)]
				s.mu.Unlock()
				ok = ok && bytes.HasPrefix(v, []byte("cache/"))
				var st []byte
				if ok {
					st = appendVarint(nil, fStatusExists, 1)
				}
				entry := appendBytes(appendString(nil, fMapKey, string(v)), fMapValue, st)
				resp = appendBytes(resp, fStatRespStatuses, entry)
			}
			return nil
		})
		return stream.SendMsg(resp)
	case methodAdd:
		type staged struct {
			data []byte
			ok   bool
		}
		var order []string
		got := map[string]*staged{}
		var cur string
		chunk := func(v []byte) ([]byte, bool) {
			var data []byte
			var crc uint64
			_ = fields(v, func(n protowire.Number, _ protowire.Type, b []byte, x uint64) error {
				switch n {
				case fChunkData:
					data = append([]byte(nil), b...)
				case fChunkCRC:
					crc = x
				}
				return nil
			})
			return data, uint64(crc32.ChecksumIEEE(data)) == crc
		}
		for {
			var req []byte
			err := stream.RecvMsg(&req)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return err
			}
			s.mu.Lock()
			s.requests++
			s.mu.Unlock()
			_ = fields(req, func(num protowire.Number, _ protowire.Type, v []byte, _ uint64) error {
				switch num {
				case fAddBatch:
					return fields(v, func(_ protowire.Number, _ protowire.Type, single []byte, _ uint64) error {
						var name string
						st := &staged{}
						_ = fields(single, func(n protowire.Number, _ protowire.Type, b []byte, _ uint64) error {
							switch n {
							case fSingleName:
								name = string(b)
							case fSingleData:
								st.data, st.ok = chunk(b)
							}
							return nil
						})
						order = append(order, name)
						got[name] = st
						return nil
					})
				case fAddBeginChunk:
					st := &staged{ok: true}
					_ = fields(v, func(n protowire.Number, _ protowire.Type, b []byte, _ uint64) error {
						switch n {
						case fBeginName:
							cur = string(b)
						case fBeginInitial:
							d, ok := chunk(b)
							st.data, st.ok = d, ok
						}
						return nil
					})
					order = append(order, cur)
					got[cur] = st
				case fAddChunk:
					d, ok := chunk(v)
					got[cur].data = append(got[cur].data, d...)
					got[cur].ok = got[cur].ok && ok
				}
				return nil
			})
		}
		var resp []byte
		for _, name := range order {
			st := got[name]
			if st.ok {
				s.mu.Lock()
				s.artifacts[name] = st.data
				s.mu.Unlock()
			}
			sum := appendString(nil, fSummaryName, name)
			if st.ok {
				sum = appendVarint(sum, fSummaryCRC, 1)
			}
			resp = appendBytes(resp, fAddRespArtifacts, sum)
		}
		return stream.SendMsg(resp)
	}
	return errors.New("unknown method " + method)
}

func startArtifactServer(t *testing.T) (*artifactServer, *Remote) {
	t.Helper()
	s := &artifactServer{artifacts: map[string][]byte{}}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	g := grpc.NewServer(grpc.UnknownServiceHandler(s.handle), grpc.ForceServerCodec(rawCodec{}))
	go func() { _ = g.Serve(l) }()
	t.Cleanup(g.Stop)
	r, err := ParseRemote("sc://" + l.Addr().String() + "/;user_id=u;session_id=0f8fad5b-d9cb-469f-a165-70867728950e")
	if err != nil {
		t.Fatal(err)
	}
	return s, r
}

func writeJar(t *testing.T, dir, name string, size int) Jar {
	t.Helper()
	data := make([]byte, size)
	for i := range data {
		data[i] = byte(i*7 + size)
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	return Jar{File: name, Path: p, Sha256: hex.EncodeToString(sum[:]), Size: int64(size)}
}

// TestPushWireFormat: small jars go in batches, a jar over 32 KiB in
// chunks (exactly a multiple too), every chunk with its CRC32; the server
// reassembles the same bytes; a second push asks, finds the receipts and
// sends nothing; a jar that is not the locked one is refused before
// anything is sent.
func TestPushWireFormat(t *testing.T) {
	srv, remote := startArtifactServer(t)
	dir := t.TempDir()
	sizes := []int{10, ChunkSize - 5, 3*ChunkSize + 17, 2 * ChunkSize, 0}
	var jars []Jar
	var total int64
	for i, n := range sizes {
		jars = append(jars, writeJar(t, dir, "j"+strconv.Itoa(i)+".jar", n))
		total += int64(n)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	first, err := Push(ctx, remote, jars, WithRetries(1, time.Millisecond))
	if err != nil {
		t.Fatalf("Push: %v", err)
	}
	if first.Sent != len(jars) || first.JarBytesSent != total || first.Present != 0 {
		t.Errorf("first push: %d sent, %d jar bytes; want %d, %d", first.Sent, first.JarBytesSent, len(jars), total)
	}
	for _, j := range jars {
		want, _ := os.ReadFile(j.Path)
		srv.mu.Lock()
		got, ok := srv.artifacts["jars/"+j.File]
		srv.mu.Unlock()
		if !ok || !bytes.Equal(want, got) {
			t.Errorf("jars/%s on the server: %d bytes (present %v), want the file's %d", j.File, len(got), ok, len(want))
		}
	}
	if len(srv.artifacts) != 2*len(jars) {
		t.Errorf("%d artifacts on the server, want %d jars and their receipts", len(srv.artifacts), len(jars))
	}
	second, err := Push(ctx, remote, jars)
	if err != nil {
		t.Fatalf("second Push: %v", err)
	}
	if second.Sent != 0 || second.JarBytesSent != 0 || second.BytesSent != 0 || second.Present != len(jars) {
		t.Errorf("second push %+v: want nothing sent", second)
	}
	bad := jars[0]
	bad.Sha256 = "00" + bad.Sha256[2:]
	bad.File = "other.jar"
	before := srv.requests
	if _, err := Push(ctx, remote, []Jar{bad}); !errors.Is(err, errdefs.Invalid) {
		t.Errorf("a jar that is not the locked one: %v, want errdefs.Invalid", err)
	}
	if srv.requests != before {
		t.Errorf("a refused jar still sent %d AddArtifacts requests", srv.requests-before)
	}
}
