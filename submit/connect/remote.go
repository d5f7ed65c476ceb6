// Package connect pushes a locked jar set into a Spark Connect session
// through the Connect artifact protocol (the AddArtifacts and
// ArtifactStatus RPCs of spark.connect.SparkConnectService), as Spark's
// own clients do (pyspark/sql/connect/client/artifact.py: 32 KiB chunks,
// each with its CRC32; artifacts under 32 KiB batched). It is the one
// package that imports gRPC.
//
// Spark's ArtifactStatus answers only for cache/<sha256> names (the
// session's block-manager cache): a jars/<name> artifact has no status. So
// after the server has accepted a jar (its CRC checked), Push adds a
// receipt: a small cache artifact whose content names the jar and its
// sha256 ("prebake-connect-receipt v1\njars/<name>\nsha256:<hex>\n") and
// whose name is cache/<sha256 of that content>, content-addressed as the
// cache requires. A later Push asks for the receipts first and sends only
// the jars without one: a second push sends no jar bytes. Receipts live
// and die with the session, as its jars do.
package connect

import (
	"crypto/rand"
	"fmt"
	"net"
	"net/url"
	"regexp"
	"strconv"
	"strings"

	"github.com/prebake/prebake/errdefs"
)

// DefaultPort is Spark Connect's default port (spark.connect.grpc.binding.port).
const DefaultPort = 15002

// Remote is a Spark Connect connection string, sc://host[:port][/;k=v;…],
// read as Spark's clients read it (pyspark ChannelBuilder): the parameters
// user_id, session_id, token, use_ssl and user_agent are the client's;
// every other parameter is a gRPC header.
type Remote struct {
	Host      string
	Port      int
	UseSSL    bool
	Token     string // a bearer token: never printed
	UserID    string
	SessionID string
	UserAgent string
	Headers   map[string]string
}

var uuidRE = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)

// ParseRemote parses a connection string. A bad one is a usage error
// (errdefs.BadArgument) that never shows the token.
func ParseRemote(s string) (*Remote, error) {
	bad := func(format string, args ...any) error {
		return errdefs.Errorf(errdefs.BadArgument, "--remote %s: "+format, append([]any{redactRemote(s)}, args...)...)
	}
	rest, ok := strings.CutPrefix(s, "sc://")
	if !ok {
		return nil, bad("a Spark Connect connection string starts with sc://")
	}
	hostport, params, _ := strings.Cut(rest, "/")
	if hostport == "" {
		return nil, bad("no host")
	}
	r := &Remote{Port: DefaultPort, Headers: map[string]string{}}
	host, port, err := net.SplitHostPort(hostport)
	if err != nil {
		host = hostport
	} else {
		p, err := strconv.Atoi(port)
		if err != nil || p < 1 || p > 65535 {
			return nil, bad("port %q is not a TCP port", port)
		}
		r.Port = p
	}
	if host == "" || strings.ContainsAny(host, "@?# ") {
		return nil, bad("bad host %q", host)
	}
	r.Host = host
	sslOff := false
	if params != "" {
		if !strings.HasPrefix(params, ";") {
			return nil, bad("the path must be empty; parameters follow as /;key=value")
		}
		for _, kv := range strings.Split(params[1:], ";") {
			if kv == "" {
				continue
			}
			k, v, ok := strings.Cut(kv, "=")
			if !ok || k == "" {
				return nil, bad("parameter %q is not key=value", redactParam(kv))
			}
			if uv, err := url.QueryUnescape(v); err == nil {
				v = uv
			}
			switch k {
			case "user_id":
				r.UserID = v
			case "session_id":
				if !uuidRE.MatchString(v) {
					return nil, bad("session_id %q is not a UUID (the server requires one)", v)
				}
				r.SessionID = strings.ToLower(v)
			case "token":
				r.Token = v // pyspark: a token implies TLS (below)
			case "use_ssl":
				r.UseSSL = strings.EqualFold(v, "true")
				sslOff = !r.UseSSL
			case "user_agent":
				r.UserAgent = v
			default:
				r.Headers[strings.ToLower(k)] = v
			}
		}
	}
	if r.Token != "" {
		if sslOff {
			// pyspark (ChannelBuilder): secure = use_ssl or token is not None.
			return nil, bad("a token goes only over TLS, as Spark's clients send it: use_ssl=false would send it in clear text; drop use_ssl=false")
		}
		r.UseSSL = true
	}
	return r, nil
}

// Target is host:port for the gRPC dial.
func (r *Remote) Target() string { return net.JoinHostPort(r.Host, strconv.Itoa(r.Port)) }

// String is the connection string with the session it names and without
// the token: the one to give SparkSession.builder.remote() (add the token
// back where one is needed).
func (r *Remote) String() string {
	var b strings.Builder
	b.WriteString("sc://" + r.Target() + "/")
	if r.UserID != "" {
		b.WriteString(";user_id=" + url.QueryEscape(r.UserID))
	}
	if r.SessionID != "" {
		b.WriteString(";session_id=" + r.SessionID)
	}
	if r.UseSSL {
		b.WriteString(";use_ssl=true")
	}
	if b.Len() == len("sc://"+r.Target()+"/") {
		return strings.TrimSuffix(b.String(), "/")
	}
	return b.String()
}

// NewSessionID returns a random (version 4) UUID, as Spark's clients make
// one for a new session.
func NewSessionID() string {
	var u [16]byte
	_, _ = rand.Read(u[:])
	u[6] = u[6]&0x0f | 0x40
	u[8] = u[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", u[0:4], u[4:6], u[6:8], u[8:10], u[10:16])
}

var tokenRE = regexp.MustCompile(`(?i)(;token=)[^;]*`)

// redactRemote hides a token parameter.
func redactRemote(s string) string { return tokenRE.ReplaceAllString(s, "${1}REDACTED") }

func redactParam(kv string) string {
	if strings.HasPrefix(strings.ToLower(kv), "token") {
		return "token=REDACTED"
	}
	return kv
}
