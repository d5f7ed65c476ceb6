package jsondoc

import "github.com/prebake/prebake/s3store"

// WarmOutput is what `prebake warm -o json` prints. cmd/warm.go prints it
// as a map today; the fields are in the map's (sorted) key order, so that
// this struct marshals to the same bytes.
type WarmOutput struct {
	Sets  []s3store.WarmResult `json:"sets"`
	Shard string               `json:"shard"`
	Store string               `json:"store"`
}

// GCOutput is what `prebake gc -o json` prints (a map in cmd/warm.go
// today; the same key order).
type GCOutput struct {
	DryRun bool              `json:"dryRun"`
	Result *s3store.GCResult `json:"result"`
	Store  string            `json:"store"`
}
