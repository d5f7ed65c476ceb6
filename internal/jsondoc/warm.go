package jsondoc

import (
	"github.com/prebake/prebake/pipeline"
	"github.com/prebake/prebake/s3store"
)

// WarmOutput is what `prebake warm -o json` prints. Its fields are in the
// (sorted) key order of the map it replaced, so that the bytes stay the same.
type WarmOutput struct {
	Sets  []pipeline.WarmResult `json:"sets"`
	Shard string                `json:"shard"`
	Store string                `json:"store"`
}

// GCOutput is what `prebake gc -o json` prints (the same key order as
// the map it replaced).
type GCOutput struct {
	DryRun bool              `json:"dryRun"`
	Result *s3store.GCResult `json:"result"`
	Store  string            `json:"store"`
}
