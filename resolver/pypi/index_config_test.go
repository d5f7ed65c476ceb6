package pypi

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/prebake/prebake/errdefs"
)

func TestLoadIndexConfig(t *testing.T) {
	noDefault := func(context.Context) (string, error) { return "", errors.New("no pip here") }
	for _, tc := range []struct {
		name  string
		files map[string]string // under the test root: etc/…, home/…
		env   map[string]string
		want  IndexConfig
		err   error
	}{
		{
			name: "global and user files, install over global",
			files: map[string]string{
				"etc/pip.conf":              "[global]\nindex-url = https://mirror.example/simple\ncert = /etc/ca.pem\n",
				"home/.config/pip/pip.conf": "# user\n[global]\nextra_index_url =\n    https://a.example/simple\n    https://b.example/simple\n[install]\nfind-links = /opt/wheels /srv/wheels\n",
				"home/.pip/pip.conf":        "[global]\nindex-url: https://legacy.example/simple\n",
				"etc/xdg/pip/pip.conf":      "[freeze]\nindex-url = https://ignored.example/\n",
			},
			want: IndexConfig{IndexURL: "https://legacy.example/simple", ExtraIndexURLs: []string{"https://a.example/simple", "https://b.example/simple"},
				FindLinks: []string{"/opt/wheels", "/srv/wheels"}, Cert: "/etc/ca.pem"},
		},
		{
			name:  "environment over files",
			files: map[string]string{"etc/pip.conf": "[global]\nindex-url = https://mirror.example/simple\n"},
			env:   map[string]string{"PIP_INDEX_URL": "https://u:p@env.example/simple", "PIP_FIND_LINKS": "/opt/wheels", "PIP_CERT": "/c.pem"},
			want:  IndexConfig{IndexURL: "https://u:p@env.example/simple", FindLinks: []string{"/opt/wheels"}, Cert: "/c.pem"},
		},
		{
			name:  "PIP_CONFIG_FILE last; XDG_CONFIG_HOME",
			files: map[string]string{"xdg/pip/pip.conf": "[global]\nindex-url = https://xdg.example/simple\n", "explicit.conf": "[install]\nno-index = true\nfind-links = /w\n"},
			env:   map[string]string{"XDG_CONFIG_HOME": "xdg", "PIP_CONFIG_FILE": "explicit.conf"},
			want:  IndexConfig{FindLinks: []string{"/w"}, NoIndex: true},
		},
		{
			name:  "PIP_CONFIG_FILE=/dev/null reads no file",
			files: map[string]string{"etc/pip.conf": "[global]\nindex-url = https://mirror.example/simple\n"},
			env:   map[string]string{"PIP_CONFIG_FILE": os.DevNull, "PIP_NO_INDEX": "1"},
			want:  IndexConfig{NoIndex: true},
		},
		{
			name: "nothing configured: no default",
			err:  ErrNoIndex,
		},
		{
			name:  "not an http URL",
			files: map[string]string{"etc/pip.conf": "[global]\nindex-url = ftp://x/\n"},
			err:   errdefs.BadArgument,
		},
		{
			name:  "a malformed file",
			files: map[string]string{"etc/pip.conf": "index-url = https://x/\n"},
			err:   errdefs.Invalid,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			for name, text := range tc.files {
				p := filepath.Join(root, name)
				os.MkdirAll(filepath.Dir(p), 0o755)
				writeFile(t, filepath.Dir(p), filepath.Base(p), text)
			}
			getenv := func(k string) (string, bool) {
				v, ok := tc.env[k]
				if ok && (k == "XDG_CONFIG_HOME" || k == "PIP_CONFIG_FILE") && v != os.DevNull {
					v = filepath.Join(root, v)
				}
				return v, ok
			}
			got, err := LoadIndexConfig(context.Background(), WithConfigEnv(getenv),
				WithConfigRoots(filepath.Join(root, "home"), filepath.Join(root, "etc")), WithPipDefault(noDefault))
			if tc.err != nil {
				if !errors.Is(err, tc.err) {
					t.Fatalf("error %v, want %v", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, *got, cmpopts.IgnoreFields(IndexConfig{}, "Sources"), cmpopts.EquateEmpty()); d != "" {
				t.Errorf("config (-want +got):\n%s", d)
			}
			if strings.Contains(got.String(), "u:p@") {
				t.Errorf("String() %q shows userinfo", got)
			}
		})
	}
}

// TestLoadIndexConfigDefault: with nothing configured the machine's pip's
// default is taken and marked so; the error without one says how to
// configure an index.
func TestLoadIndexConfigDefault(t *testing.T) {
	root := t.TempDir()
	env := WithConfigEnv(func(string) (string, bool) { return "", false })
	roots := WithConfigRoots(filepath.Join(root, "home"), filepath.Join(root, "etc"))
	got, err := LoadIndexConfig(context.Background(), env, roots,
		WithPipDefault(func(context.Context) (string, error) { return "https://pips-default.example/simple", nil }))
	if err != nil || got.IndexURL != "https://pips-default.example/simple" || !got.Default {
		t.Fatalf("got %+v, %v", got, err)
	}
	_, err = LoadIndexConfig(context.Background(), env, roots, WithPipDefault(nil))
	if !errors.Is(err, ErrNoIndex) || !errors.Is(err, errdefs.BadArgument) {
		t.Fatalf("error %v", err)
	}
	for _, s := range []string{"pip config set global.index-url", "PIP_INDEX_URL", "PIP_FIND_LINKS"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error %q does not say %q", err, s)
		}
	}
}

// TestAskPipDefault asks this machine's pip (when there is one) for its
// default index: an http(s) URL.
func TestAskPipDefault(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("no python3")
	}
	u, err := askPipDefault(context.Background())
	if err != nil {
		t.Skipf("python3 has no pip: %v", err)
	}
	if !strings.HasPrefix(u, "https://") && !strings.HasPrefix(u, "http://") {
		t.Errorf("default index %q", u)
	}
}
