package layers

import (
	"context"
	"os"
	"testing"
)

func BenchmarkZZLayer(b *testing.B) {
	files, _ := benchJars(b, b.TempDir(), 32, 4<<20)
	entries, _ := tarEntries(files)
	ctx := context.Background()
	for b.Loop() {
		for range 5 {
			tmp := b.TempDir()
			writeLayerBlob(ctx, entries, DefaultEpoch, tmp, nopTask{})
			os.RemoveAll(tmp)
		}
	}
}
