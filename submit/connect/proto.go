package connect

import (
	"fmt"

	"google.golang.org/protobuf/encoding/protowire"
)

// The few spark.connect messages Push sends and reads, encoded with
// protowire. Field numbers are those of Spark's base.proto (Spark 3.5 and
// 4.x; the same in apache/spark-connect-go's generated base.pb.go, which is
// an internal package there and cannot be imported).
const (
	// UserContext
	fUserID   = 1
	fUserName = 2
	// AddArtifactsRequest
	fAddSession    = 1
	fAddUser       = 2
	fAddBatch      = 3
	fAddBeginChunk = 4
	fAddChunk      = 5
	fAddClientType = 6
	// AddArtifactsRequest.ArtifactChunk
	fChunkData = 1
	fChunkCRC  = 2
	// AddArtifactsRequest.SingleChunkArtifact
	fSingleName = 1
	fSingleData = 2
	// AddArtifactsRequest.Batch
	fBatchArtifacts = 1
	// AddArtifactsRequest.BeginChunkedArtifact
	fBeginName    = 1
	fBeginTotal   = 2
	fBeginChunks  = 3
	fBeginInitial = 4
	// AddArtifactsResponse
	fAddRespArtifacts     = 1
	fAddRespSession       = 2
	fAddRespServerSession = 3
	// AddArtifactsResponse.ArtifactSummary
	fSummaryName = 1
	fSummaryCRC  = 2
	// ArtifactStatusesRequest
	fStatSession    = 1
	fStatUser       = 2
	fStatClientType = 3
	fStatNames      = 4
	// ArtifactStatusesResponse (statuses: map<string, ArtifactStatus>)
	fStatRespStatuses      = 1
	fStatRespServerSession = 3
	fMapKey                = 1
	fMapValue              = 2
	fStatusExists          = 1
)

func appendString(b []byte, num protowire.Number, s string) []byte {
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendString(b, s)
}

func appendBytes(b []byte, num protowire.Number, v []byte) []byte {
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendBytes(b, v)
}

func appendVarint(b []byte, num protowire.Number, v uint64) []byte {
	b = protowire.AppendTag(b, num, protowire.VarintType)
	return protowire.AppendVarint(b, v)
}

func userContext(userID string) []byte {
	var u []byte
	if userID != "" {
		u = appendString(u, fUserID, userID)
		u = appendString(u, fUserName, userID)
	}
	return u
}

// requestHead is the session_id, user_context and client_type of a request.
func (p *pusher) requestHead(session, user, clientType protowire.Number) []byte {
	b := appendString(nil, session, p.sessionID)
	b = appendBytes(b, user, userContext(p.userID))
	return appendString(b, clientType, p.clientType)
}

func chunkMsg(data []byte, crc uint32) []byte {
	c := appendBytes(nil, fChunkData, data)
	return appendVarint(c, fChunkCRC, uint64(crc))
}

// fields calls f for every field of msg.
func fields(msg []byte, f func(num protowire.Number, typ protowire.Type, v []byte, x uint64) error) error {
	for len(msg) > 0 {
		num, typ, n := protowire.ConsumeTag(msg)
		if n < 0 {
			return protowire.ParseError(n)
		}
		msg = msg[n:]
		var v []byte
		var x uint64
		switch typ {
		case protowire.BytesType:
			v, n = protowire.ConsumeBytes(msg)
		case protowire.VarintType:
			x, n = protowire.ConsumeVarint(msg)
		default:
			n = protowire.ConsumeFieldValue(num, typ, msg)
		}
		if n < 0 {
			return protowire.ParseError(n)
		}
		msg = msg[n:]
		if err := f(num, typ, v, x); err != nil {
			return err
		}
	}
	return nil
}

// addResponse is an AddArtifactsResponse: each artifact's CRC verdict.
type addResponse struct {
	crcOK         map[string]bool
	serverSession string
}

func parseAddResponse(msg []byte) (*addResponse, error) {
	r := &addResponse{crcOK: map[string]bool{}}
	err := fields(msg, func(num protowire.Number, typ protowire.Type, v []byte, _ uint64) error {
		switch {
		case num == fAddRespArtifacts && typ == protowire.BytesType:
			var name string
			var ok bool
			if err := fields(v, func(n protowire.Number, t protowire.Type, sv []byte, x uint64) error {
				switch {
				case n == fSummaryName && t == protowire.BytesType:
					name = string(sv)
				case n == fSummaryCRC && t == protowire.VarintType:
					ok = x != 0
				}
				return nil
			}); err != nil {
				return err
			}
			r.crcOK[name] = ok
		case num == fAddRespServerSession && typ == protowire.BytesType:
			r.serverSession = string(v)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("AddArtifactsResponse: %w", err)
	}
	return r, nil
}

// statusResponse is an ArtifactStatusesResponse: which names exist.
type statusResponse struct {
	exists        map[string]bool
	serverSession string
}

func parseStatusResponse(msg []byte) (*statusResponse, error) {
	r := &statusResponse{exists: map[string]bool{}}
	err := fields(msg, func(num protowire.Number, typ protowire.Type, v []byte, _ uint64) error {
		switch {
		case num == fStatRespStatuses && typ == protowire.BytesType:
			var key string
			var exists bool
			if err := fields(v, func(n protowire.Number, t protowire.Type, ev []byte, _ uint64) error {
				switch {
				case n == fMapKey && t == protowire.BytesType:
					key = string(ev)
				case n == fMapValue && t == protowire.BytesType:
					return fields(ev, func(sn protowire.Number, st protowire.Type, _ []byte, x uint64) error {
						if sn == fStatusExists && st == protowire.VarintType {
							exists = x != 0
						}
						return nil
					})
				}
				return nil
			}); err != nil {
				return err
			}
			r.exists[key] = exists
		case num == fStatRespServerSession && typ == protowire.BytesType:
			r.serverSession = string(v)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("ArtifactStatusesResponse: %w", err)
	}
	return r, nil
}
