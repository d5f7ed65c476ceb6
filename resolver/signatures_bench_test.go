package resolver

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prebake/prebake/internal/m2test"
	"github.com/prebake/prebake/internal/pgpverify/pgptest"
)

// BenchmarkResolveSignatures resolves one module with 50 dependencies of
// 2 MiB each from a file: repository, cold cache, without and with
// signature verification; and a frozen re-check from the cached
// signatures.
//
//	go test -run '^$' -bench BenchmarkResolveSignatures -benchmem ./resolver/
func BenchmarkResolveSignatures(b *testing.B) {
	const n, size = 50, 2 << 20
	key := pgptest.NewKey(b, "bench")
	r := m2test.New(b)
	var deps strings.Builder
	for i := range n {
		a := fmt.Sprintf("lib%02d", i)
		jar := bytes.Repeat([]byte{byte(i)}, size)
		base := "org/b/" + a + "/1.0/" + a + "-1.0"
		r.Put(base+".pom", []byte("<project><groupId>org.b</groupId><artifactId>"+a+"</artifactId><version>1.0</version></project>"), "sha1")
		r.Put(base+".jar", jar, "sha1")
		r.Put(base+".jar.asc", key.Sign(b, jar))
		fmt.Fprintf(&deps, "<dependency><groupId>org.b</groupId><artifactId>%s</artifactId><version>1.0</version></dependency>", a)
	}
	r.Put("org/b/app/1.0/app-1.0.pom", []byte("<project><groupId>org.b</groupId><artifactId>app</artifactId><version>1.0</version><dependencies>"+deps.String()+"</dependencies></project>"), "sha1")
	r.Put("org/b/app/1.0/app-1.0.jar", []byte("app"), "sha1")
	r.Put("org/b/app/1.0/app-1.0.jar.asc", key.Sign(b, []byte("app")))
	kr := keyringOf(&testing.T{}, key)
	for _, verify := range []bool{false, true} {
		b.Run(fmt.Sprintf("verify=%v", verify), func(b *testing.B) {
			for b.Loop() {
				dir := b.TempDir()
				req := Request{Packages: []string{"org.b:app:1.0"}, Repositories: []string{"file://" + r.Dir}, NoDefaultRepositories: true,
					CacheDir: filepath.Join(dir, "c"), LockPath: filepath.Join(dir, "l")}
				if verify {
					req.Signatures = kr
				}
				if _, err := Resolve(context.Background(), req, fastOpts()...); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	b.Run("frozen-offline-recheck", func(b *testing.B) {
		dir := b.TempDir()
		req := Request{Packages: []string{"org.b:app:1.0"}, Repositories: []string{"file://" + r.Dir}, NoDefaultRepositories: true,
			CacheDir: filepath.Join(dir, "c"), LockPath: filepath.Join(dir, "l"), Signatures: kr}
		if _, err := Resolve(context.Background(), req, fastOpts()...); err != nil {
			b.Fatal(err)
		}
		req.Frozen, req.Offline = true, true
		for b.Loop() {
			if _, err := Resolve(context.Background(), req, fastOpts()...); err != nil {
				b.Fatal(err)
			}
		}
	})
}
