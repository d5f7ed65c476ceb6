package pypi

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/prebake/prebake/errdefs"
	"github.com/prebake/prebake/internal/localfile"
)

// IndexConfig is where wheels come from: the machine's pip configuration.
// The URLs keep their userinfo (the index's credentials) for the requests
// only; String and every error and log line strip it.
type IndexConfig struct {
	// IndexURL is the main index (PEP 503/691 simple API root); "" with
	// NoIndex.
	IndexURL string
	// ExtraIndexURLs are searched as well, after IndexURL.
	ExtraIndexURLs []string
	// FindLinks are local directories of wheels (or file: URLs of them),
	// and http(s) pages of links, searched before the indexes.
	FindLinks []string
	// Cert is a CA bundle file for the indexes' TLS ("" for the system's).
	Cert string
	// NoIndex is pip's --no-index: find-links only.
	NoIndex bool
	// Sources names the files and variables read, in order (for a message
	// saying where the configuration came from).
	Sources []string
	// Default says IndexURL is the machine's pip's own default, not read
	// from a configuration.
	Default bool
}

// String describes the configuration without userinfo.
func (c *IndexConfig) String() string {
	var parts []string
	if c.NoIndex {
		parts = append(parts, "no index")
	} else {
		parts = append(parts, "index "+noUserinfo(c.IndexURL))
	}
	for _, u := range c.ExtraIndexURLs {
		parts = append(parts, "extra index "+noUserinfo(u))
	}
	for _, f := range c.FindLinks {
		parts = append(parts, "find-links "+noUserinfo(f))
	}
	return strings.Join(parts, ", ")
}

// ConfigOption configures LoadIndexConfig.
type ConfigOption func(*configOptions) error

type configOptions struct {
	getenv     func(string) (string, bool)
	home       string
	etc        string
	pipDefault func(ctx context.Context) (string, error)
	memoDir    string // WithPipDefaultMemo
}

// WithConfigEnv sets how the PIP_* and XDG_* variables are read (the
// default os.LookupEnv).
func WithConfigEnv(getenv func(string) (string, bool)) ConfigOption {
	return func(o *configOptions) error { o.getenv = getenv; return nil }
}

// WithConfigRoots sets the home directory and the directory holding
// pip.conf and xdg/pip/pip.conf ("/etc"), for tests.
func WithConfigRoots(home, etc string) ConfigOption {
	return func(o *configOptions) error { o.home, o.etc = home, etc; return nil }
}

// WithPipDefault sets how the default index is found when nothing
// configures one (the default asks the machine's python3 -m pip: see
// LoadIndexConfig). A nil f means there is no default.
func WithPipDefault(f func(ctx context.Context) (string, error)) ConfigOption {
	return func(o *configOptions) error { o.pipDefault = f; return nil }
}

// ErrNoIndex is matched (errors.Is) when no index is configured and the
// machine's pip names none either.
var ErrNoIndex = fmt.Errorf("no Python package index configured")

// LoadIndexConfig reads the machine's pip configuration as pip does (pip
// 23+, "Configuration" in pip's documentation), later sources overriding
// earlier ones key by key:
//
//  1. the global files /etc/xdg/pip/pip.conf and /etc/pip.conf;
//  2. the user files ~/.pip/pip.conf (legacy), then
//     $XDG_CONFIG_HOME/pip/pip.conf (default ~/.config/pip/pip.conf);
//  3. $PIP_CONFIG_FILE (os.DevNull there loads no file at all);
//  4. the variables PIP_INDEX_URL, PIP_EXTRA_INDEX_URL, PIP_FIND_LINKS,
//     PIP_CERT and PIP_NO_INDEX.
//
// In each file the [install] section overrides [global]; keys are
// index-url, extra-index-url, find-links (whitespace-separated lists),
// cert and no-index ("_" and "-" alike). A virtual environment's pip.conf
// is not read: prebake resolves for an image, not for a venv.
//
// No registry host is written in prebake: when nothing above names an
// index (and no-index is not set), the default is the one the machine's
// own pip uses, asked from `python3 -m pip` (its built-in PyPI URL); when
// that cannot be asked either, the error (ErrNoIndex, errdefs.BadArgument,
// exit 64) says how to configure one.
func LoadIndexConfig(ctx context.Context, opts ...ConfigOption) (*IndexConfig, error) {
	o := &configOptions{getenv: os.LookupEnv, etc: "/etc", pipDefault: askPipDefault}
	if h, err := os.UserHomeDir(); err == nil {
		o.home = h
	}
	for _, opt := range opts {
		if err := opt(o); err != nil {
			return nil, err
		}
	}
	vals := map[string]string{}
	var sources []string
	env := func(k string) string { v, _ := o.getenv(k); return v }
	files := []string{filepath.Join(o.etc, "xdg", "pip", "pip.conf"), filepath.Join(o.etc, "pip.conf")}
	if o.home != "" {
		files = append(files, filepath.Join(o.home, ".pip", "pip.conf"))
	}
	if x := env("XDG_CONFIG_HOME"); x != "" {
		files = append(files, filepath.Join(x, "pip", "pip.conf"))
	} else if o.home != "" {
		files = append(files, filepath.Join(o.home, ".config", "pip", "pip.conf"))
	}
	explicit := env("PIP_CONFIG_FILE")
	if explicit == os.DevNull {
		files = nil
	} else if explicit != "" {
		files = append(files, explicit)
	}
	for _, f := range files {
		kv, err := readPipConf(f, f == explicit)
		if err != nil {
			return nil, err
		}
		if kv == nil {
			continue
		}
		sources = append(sources, f)
		for k, v := range kv {
			vals[k] = v
		}
	}
	for _, k := range []string{"index-url", "extra-index-url", "find-links", "cert", "no-index"} {
		name := "PIP_" + strings.ToUpper(strings.ReplaceAll(k, "-", "_"))
		if v, ok := o.getenv(name); ok && v != "" {
			vals[k] = v
			sources = append(sources, "$"+name)
		}
	}
	c := &IndexConfig{
		IndexURL:       strings.TrimSpace(vals["index-url"]),
		ExtraIndexURLs: strings.Fields(vals["extra-index-url"]),
		FindLinks:      strings.Fields(vals["find-links"]),
		Cert:           strings.TrimSpace(vals["cert"]),
		Sources:        sources,
	}
	switch strings.ToLower(strings.TrimSpace(vals["no-index"])) {
	case "1", "true", "yes", "on":
		c.NoIndex = true
		c.IndexURL, c.ExtraIndexURLs = "", nil
	}
	for _, u := range append([]string{c.IndexURL}, c.ExtraIndexURLs...) {
		if u != "" && !strings.HasPrefix(u, "https://") && !strings.HasPrefix(u, "http://") {
			return nil, errdefs.Optionf(errdefs.BadArgument, "index-url", "pip configuration (%s): index %q is not an http(s) URL (local wheels go in find-links)", strings.Join(sources, ", "), noUserinfo(u))
		}
	}
	if c.IndexURL == "" && !c.NoIndex {
		var def string
		var err error
		if ask := memoized(o.memoDir, o.getenv, o.pipDefault); ask != nil {
			def, err = ask(ctx)
		}
		if def == "" {
			why := ""
			if err != nil {
				why = " (" + err.Error() + ")"
			}
			return nil, errdefs.New(errdefs.BadArgument, fmt.Errorf("%w: none in pip's configuration (%s) and the machine's pip names no default%s; configure one as pip reads it: `pip config set global.index-url URL`, PIP_INDEX_URL=URL, or PIP_FIND_LINKS=DIR with PIP_NO_INDEX=1 for local wheels only", ErrNoIndex, orNone(sources), why))
		}
		c.IndexURL, c.Default = def, true
	}
	return c, nil
}

func orNone(s []string) string {
	if len(s) == 0 {
		return "no file or variable set"
	}
	return "read " + strings.Join(s, ", ")
}

// askPipDefault asks the machine's pip for the index it uses when none is
// configured.
func askPipDefault(ctx context.Context) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "python3", "-c", "from pip._internal.models.index import PyPI; print(PyPI.simple_url)")
	cmd.Env = append(os.Environ(), "PYTHONDONTWRITEBYTECODE=1")
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("python3 -m pip could not be asked for its default index: %v", err)
	}
	u := strings.TrimSpace(string(out))
	if !strings.HasPrefix(u, "https://") && !strings.HasPrefix(u, "http://") {
		return "", fmt.Errorf("the machine's pip answered %q for its default index", u)
	}
	return u, nil
}

// readPipConf reads one pip.conf's [global] then [install] keys; nil when
// the file does not exist (an explicit PIP_CONFIG_FILE must).
func readPipConf(path string, mustExist bool) (map[string]string, error) {
	if _, err := os.Stat(path); os.IsNotExist(err) && !mustExist {
		return nil, nil
	}
	data, err := localfile.Read(path, MaxFileSize)
	if err != nil {
		return nil, err
	}
	sections := map[string]map[string]string{}
	section, key := "", ""
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64<<10), MaxFileSize)
	line := 0
	for sc.Scan() {
		line++
		raw := sc.Text()
		t := strings.TrimSpace(raw)
		switch {
		case t == "" || t[0] == '#' || t[0] == ';':
			continue
		case (raw[0] == ' ' || raw[0] == '\t') && key != "" && section != "":
			sections[section][key] += "\n" + t // a continuation line
			continue
		case strings.HasPrefix(t, "[") && strings.HasSuffix(t, "]"):
			section, key = strings.ToLower(strings.TrimSpace(t[1:len(t)-1])), ""
			if sections[section] == nil {
				sections[section] = map[string]string{}
			}
			continue
		}
		i := strings.IndexAny(t, "=:")
		if i <= 0 || section == "" {
			return nil, lineErrorf(Origin{path, line}, "not a pip configuration line (want [section] or key = value)")
		}
		key = strings.ReplaceAll(strings.ToLower(strings.TrimSpace(t[:i])), "_", "-")
		sections[section][key] = strings.TrimSpace(t[i+1:])
	}
	kv := map[string]string{}
	for _, s := range []string{"global", "install"} {
		for k, v := range sections[s] {
			kv[k] = v
		}
	}
	return kv, nil
}
