package repo

import (
	"context"
	"net/http"
	"sync"
	"time"

	"github.com/prebake/prebake/internal/netprobe"
)

// RepositoryProbe is what one repository of the chain answered to one
// cheap request (netprobe.Answer): a HEAD of its root for http(s), a stat
// of its directory for file repositories.
type RepositoryProbe struct {
	Name string `json:"name"`
	URL  string `json:"url"` // without userinfo
	// Auth is true when the request carried credentials (URL userinfo or
	// a settings.xml server); their values are never reported.
	Auth bool `json:"auth"`
	netprobe.Answer
}

// DefaultProbeTimeout bounds each repository's probe.
const DefaultProbeTimeout = 5 * time.Second

// ProbeChain probes every repository of the chain req would resolve from
// (the same chain: Repositories, NoDefaultRepositories, Settings,
// IvySettings, Home, DefaultArtifactRepository), one request
// each, concurrently, each within timeout (DefaultProbeTimeout when 0). The
// probes are in chain order; an Ivy settings resolver in dual mode is
// followed by its artifact repositories. Nothing is cached, nothing retried.
func ProbeChain(ctx context.Context, req Config, timeout time.Duration, opts ...Option) ([]RepositoryProbe, error) {
	o, err := makeOptions(req.options(opts))
	if err != nil {
		return nil, err
	}
	if timeout <= 0 {
		timeout = DefaultProbeTimeout
	}
	chain, _, err := chainFor(ctx, req, o)
	if err != nil {
		return nil, err
	}
	var repos []*entry
	seen := map[*entry]bool{}
	for _, r := range chain {
		for _, x := range append([]*entry{r}, r.dual...) {
			if !seen[x] {
				seen[x] = true
				repos = append(repos, x)
			}
		}
	}
	out := make([]RepositoryProbe, len(repos))
	var wg sync.WaitGroup
	for i, r := range repos {
		out[i] = RepositoryProbe{Name: r.Name, URL: r.URL, Auth: r.hasAuth}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if r.isFile() {
				out[i].Answer = netprobe.Dir(r.dir)
				return
			}
			out[i].Answer = netprobe.HTTP(ctx, o.client, http.MethodHead, r.base, timeout, func(hr *http.Request) {
				if r.hasAuth {
					hr.SetBasicAuth(r.user, r.pass)
				}
			})
		}()
	}
	wg.Wait()
	return out, ctx.Err()
}
