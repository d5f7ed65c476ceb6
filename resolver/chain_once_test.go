package resolver

import (
	"context"
	"errors"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/prebake/prebake/internal/m2test"
	"github.com/prebake/prebake/resolver/repo"

	"github.com/google/go-cmp/cmp"

	"github.com/prebake/prebake/resolver/ivysettings"
	"github.com/prebake/prebake/resolver/mavensettings"
)

// countingLoaders reads the settings files as the resolver does, counting
// the reads of each kind.
func countingLoaders(maven, ivy *atomic.Int32) Option {
	return withRepo(repo.WithSettingsLoaders(
		func(path, home string, lookup func(string) (string, bool)) (*mavensettings.Settings, error) {
			maven.Add(1)
			return mavensettings.Load(path, home, lookup)
		},
		func(ctx context.Context, spec string, env ivysettings.Env) (*ivysettings.Settings, error) {
			ivy.Add(1)
			return ivysettings.Load(ctx, spec, env)
		}))
}

// TestChainBuiltOnce: each call builds the repository chain once, reading
// its settings file once (Resolve used to build it twice, for the lock
// check and for the source, and parse an Ivy settings file twice).
func TestChainBuiltOnce(t *testing.T) {
	repos, _ := filepath.Abs(filepath.Join(ivsDir, "repos"))
	repoA := "file://" + filepath.ToSlash(repos) + "/repo-a/"
	ivy := m2test.WriteFiles(t, map[string]string{"ivysettings.xml": `<ivysettings><settings defaultResolver="a"/><resolvers>
		<ibiblio name="a" root="` + repoA + `" m2compatible="true"/></resolvers></ivysettings>`})
	maven := writeSettings(t, ``)
	const pkg = "org.prebake.ivs:app:1.0"
	for _, tc := range []struct {
		name string
		req  Request
		// call runs the entry point under test on req.
		call func(ctx context.Context, req Request, opts ...Option) error
		// wantMaven, wantIvy: the reads of req.Settings and req.IvySettings.
		wantMaven, wantIvy int32
	}{
		{
			name: "Resolve, Ivy settings", req: Request{Packages: []string{pkg}, IvySettings: filepath.Join(ivy, "ivysettings.xml")},
			call: resolveCall, wantIvy: 1,
		},
		{
			name: "Resolve, Ivy settings, from the lock", req: Request{Packages: []string{pkg}, IvySettings: filepath.Join(ivy, "ivysettings.xml")},
			call: twiceCall, wantIvy: 2, // once per Resolve
		},
		{
			name: "Resolve, Maven settings", req: Request{Packages: []string{pkg}, Settings: maven, NoDefaultRepositories: true, Repositories: []string{repoA}},
			call: resolveCall, wantMaven: 1,
		},
		{
			name: "NewSource, Ivy settings", req: Request{IvySettings: filepath.Join(ivy, "ivysettings.xml")},
			call: func(ctx context.Context, req Request, opts ...Option) error {
				_, err := NewSource(ctx, req, opts...)
				return err
			},
			wantIvy: 1,
		},
		{
			name: "ProbeChain, Maven settings", req: Request{Settings: maven, NoDefaultRepositories: true, Repositories: []string{repoA}},
			call: func(ctx context.Context, req Request, opts ...Option) error {
				_, err := ProbeChain(ctx, req, 0, opts...)
				return err
			},
			wantMaven: 1,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			tc.req.CacheDir = filepath.Join(dir, "cache")
			tc.req.LockPath = filepath.Join(dir, "prebake.lock")
			var m, i atomic.Int32
			if err := tc.call(context.Background(), tc.req, countingLoaders(&m, &i)); err != nil {
				t.Fatal(err)
			}
			if m.Load() != tc.wantMaven || i.Load() != tc.wantIvy {
				t.Errorf("settings.xml read %d times, Ivy settings %d times; want %d and %d", m.Load(), i.Load(), tc.wantMaven, tc.wantIvy)
			}
		})
	}
}

func resolveCall(ctx context.Context, req Request, opts ...Option) error {
	_, err := Resolve(ctx, req, opts...)
	return err
}

// twiceCall resolves req, then resolves it again from the lock written.
func twiceCall(ctx context.Context, req Request, opts ...Option) error {
	if err := resolveCall(ctx, req, opts...); err != nil {
		return err
	}
	res, err := Resolve(ctx, req, opts...)
	if err == nil && !res.FromLock {
		return errors.New("the second resolution did not come from the lock")
	}
	return err
}

// TestChainEnvFromRequest: the default chain's home and
// DEFAULT_ARTIFACT_REPOSITORY come from the Request alone, never from the
// process environment (cmd reads it).
func TestChainEnvFromRequest(t *testing.T) {
	t.Setenv("HOME", "/env/home")
	t.Setenv(repo.EnvDefaultArtifactRepository, "https://env.example/maven/")
	for _, tc := range []struct {
		name string
		req  Request
		want []Repository
	}{
		{
			name: "nothing set: no local-m2-cache, Spark's roots",
			want: []Repository{{Name: repo.RepoCentral, URL: repo.DefaultCentralURL}, {Name: repo.RepoSparkPackage, URL: repo.DefaultSparkPackagesURL}},
		},
		{
			name: "Home",
			req:  Request{Home: "/home/u"},
			want: []Repository{{Name: repo.RepoLocalM2, URL: "file:///home/u/.m2/repository/"}, {Name: repo.RepoCentral, URL: repo.DefaultCentralURL}, {Name: repo.RepoSparkPackage, URL: repo.DefaultSparkPackagesURL}},
		},
		{
			name: "DefaultArtifactRepository",
			req:  Request{DefaultArtifactRepository: "https://nexus.example/maven"},
			want: []Repository{{Name: repo.RepoCentral, URL: "https://nexus.example/maven/"}, {Name: repo.RepoSparkPackage, URL: "https://nexus.example/maven/"}},
		},
		{
			name: "settings: ${user.home} is Home",
			req:  Request{Home: "/home/u", Settings: writeSettings(t, `<localRepository>${user.home}/alt-m2</localRepository>`)},
			want: []Repository{{Name: repo.RepoLocalM2, URL: "file:///home/u/alt-m2/"}, {Name: repo.RepoCentral, URL: repo.DefaultCentralURL}, {Name: repo.RepoSparkPackage, URL: repo.DefaultSparkPackagesURL}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			chain, err := repo.NewChain(context.Background(), tc.req.repoConfig())
			if err != nil {
				t.Fatal(err)
			}
			got := chain.Repositories()
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("chain (-want +got):\n%s", d)
			}
		})
	}
}
