package cmd

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/spf13/pflag"
	"go.yaml.in/yaml/v3"

	"github.com/prebake/prebake/internal/exitcode"
	"github.com/prebake/prebake/internal/localfile"
)

// A setting is one key of prebake.yaml and its PREBAKE_* variable, and the
// flags it gives a default to. Every command gets the settings for the flags
// it has, through one loader (applySettings), with one precedence: flags,
// then the environment, then the file. Credentials do not belong here: S3
// uses the AWS chain, registries the Docker config or PREBAKE_REGISTRY_AUTH.
type setting struct {
	key   string   // prebake.yaml key
	env   string   // PREBAKE_* variable
	flags []string // the flags it sets, on the commands that have them
	list  bool     // a YAML list (each entry one flag value)
	bool  bool     // a YAML boolean
	// orWords: with bool, a string is taken too (strict: scala-binary,hadoop-version)
	orWords bool
	// path is a file or directory: a leading ~ or ~/ in prebake.yaml is
	// the home directory, as a shell expands it (the environment's value
	// was expanded by the shell that set it).
	path bool
	// nearFile: a relative path in prebake.yaml is relative to the
	// file's directory, not to the working directory (an Airflow task's
	// is its own temporary one).
	nearFile bool
	// local is this machine's (the cache directory): prebake init leaves
	// it out of the prebake.yaml a team commits.
	local bool
}

var settings = []setting{
	{key: "store", env: "PREBAKE_STORE", flags: []string{"store"}},
	{key: "endpoint", env: "PREBAKE_ENDPOINT", flags: []string{"endpoint"}},
	{key: "pathStyle", env: "PREBAKE_PATH_STYLE", flags: []string{"path-style"}, bool: true},
	{key: "region", env: "PREBAKE_REGION", flags: []string{"region"}},
	{key: "urlStyle", env: "PREBAKE_URL_STYLE", flags: []string{"url-style"}},
	{key: "expires", env: "PREBAKE_EXPIRES", flags: []string{"expires"}},
	// submit --image-target and bake image --target name the same thing.
	{key: "imageTarget", env: "PREBAKE_IMAGE_TARGET", flags: []string{"image-target", "target"}},
	{key: "cache", env: "PREBAKE_CACHE", flags: []string{"cache"}, path: true, local: true},
	{key: "repositories", env: "PREBAKE_REPOSITORIES", flags: []string{"repositories"}, list: true},
	{key: "noDefaultRepositories", env: "PREBAKE_NO_DEFAULT_REPOSITORIES", flags: []string{"no-default-repositories"}, bool: true},
	{key: "excludePackages", env: "PREBAKE_EXCLUDE_PACKAGES", flags: []string{"exclude-packages"}, list: true},
	{key: "settings", env: "PREBAKE_SETTINGS", flags: []string{"settings"}, path: true},
	{key: "conflict", env: "PREBAKE_CONFLICT", flags: []string{"conflict"}},
	// The Ivy a team follows ahead of Spark (2.6.0), for every resolution.
	{key: "ivyVersion", env: "PREBAKE_IVY_VERSION", flags: []string{"ivy-version"}},
	{key: "checksumPolicy", env: "PREBAKE_CHECKSUM_POLICY", flags: []string{"checksum-policy"}},
	{key: "offline", env: "PREBAKE_OFFLINE", flags: []string{"offline"}, bool: true},
	{key: "maxRetryWait", env: "PREBAKE_MAX_RETRY_WAIT", flags: []string{"max-retry-wait"}},
	{key: "verifySignatures", env: "PREBAKE_VERIFY_SIGNATURES", flags: []string{"verify-signatures"}, bool: true},
	{key: "keyring", env: "PREBAKE_KEYRING", flags: []string{"keyring"}, path: true},
	{key: "strict", env: "PREBAKE_STRICT", flags: []string{"strict"}, bool: true, orWords: true},
	// A lock and frozen pin every run that reads the file, the runs of
	// prebake as spark-submit (SparkSubmitOperator) included, which take
	// no prebake flag. A relative lock in prebake.yaml is next to the file.
	{key: "lock", env: "PREBAKE_LOCK", flags: []string{"lock"}, path: true, nearFile: true},
	{key: "frozen", env: "PREBAKE_FROZEN", flags: []string{"frozen"}, bool: true},
	// The Python half: its input (relative to the file, as the lock) and
	// the target, until the target is read from the base image.
	{key: "pyRequirements", env: "PREBAKE_PY_REQUIREMENTS", flags: []string{"py-requirements"}, path: true, nearFile: true},
	{key: "pythonVersion", env: "PREBAKE_PYTHON_VERSION", flags: []string{"python-version"}},
	{key: "pythonPlatform", env: "PREBAKE_PYTHON_PLATFORM", flags: []string{"python-platform"}},
}

// configPath picks the configuration file: --config, else $PREBAKE_CONFIG,
// else ./prebake.yaml when it exists; "" when there is none.
func configPath(explicit string, getenv func(string) string) string {
	switch {
	case explicit != "":
		return explicit
	case getenv("PREBAKE_CONFIG") != "":
		return getenv("PREBAKE_CONFIG")
	}
	if _, err := os.Stat("prebake.yaml"); err == nil {
		return "prebake.yaml"
	}
	return ""
}

// maxConfigSize bounds prebake.yaml.
const maxConfigSize = 4 << 20

// loadConfig reads a prebake.yaml into flag values by key (a list setting
// has one value per entry). Unknown keys and wrong types are exit 65.
func loadConfig(path string) (map[string][]string, error) {
	// A regular file of at most 4 MiB (a FIFO or /dev/zero is refused
	// before it is read): 65, or 66 when missing.
	data, err := localfile.Read(path, maxConfigSize)
	if err != nil {
		return nil, fmt.Errorf("config %w", err)
	}
	var raw map[string]any
	if err := yaml.NewDecoder(bytes.NewReader(data)).Decode(&raw); err != nil && !errors.Is(err, io.EOF) {
		return nil, exitcode.Errorf(exitcode.DataErr, "config %s: %v", path, err)
	}
	out := map[string][]string{}
	var keys []string
	for _, s := range settings {
		keys = append(keys, s.key)
	}
	sort.Strings(keys)
	for k, v := range raw {
		s, ok := settingByKey(k)
		if !ok {
			return nil, exitcode.Errorf(exitcode.DataErr, "config %s: unknown key %q (known: %s)", path, k, strings.Join(keys, ", "))
		}
		vals, err := configValues(s, v)
		if err != nil {
			return nil, exitcode.Errorf(exitcode.DataErr, "config %s: %s: %v", path, k, err)
		}
		out[k] = vals
	}
	return out, nil
}

func settingByKey(k string) (setting, bool) {
	for _, s := range settings {
		if s.key == k {
			return s, true
		}
	}
	return setting{}, false
}

func configValues(s setting, v any) ([]string, error) {
	switch x := v.(type) {
	case nil:
		return nil, nil
	case bool:
		if !s.bool {
			return nil, fmt.Errorf("want a string, got %v", x)
		}
		return []string{strconv.FormatBool(x)}, nil
	case string:
		if s.bool && !s.orWords {
			return nil, fmt.Errorf("want true or false, got %q", x)
		}
		return []string{x}, nil
	case []any:
		if !s.list {
			return nil, fmt.Errorf("want one value, got a list")
		}
		var out []string
		for _, e := range x {
			str, ok := e.(string)
			if !ok {
				return nil, fmt.Errorf("want a list of strings, got %v", e)
			}
			out = append(out, str)
		}
		return out, nil
	}
	return nil, fmt.Errorf("unsupported value %v", v)
}

// applySettings gives every flag of fl that the command line did not set
// its default from the environment, else from the configuration file. It
// returns the file used ("" for none).
func applySettings(fl *pflag.FlagSet, explicit string, getenv func(string) string) (string, error) {
	path := configPath(explicit, getenv)
	var file map[string][]string
	if path != "" {
		var err error
		if file, err = loadConfig(path); err != nil {
			return path, err
		}
	}
	for _, s := range settings {
		for _, name := range s.flags {
			f := fl.Lookup(name)
			if f == nil || f.Changed {
				continue
			}
			var vals []string
			from := s.env
			if v := getenv(s.env); v != "" {
				vals = []string{v}
			} else if vs, ok := file[s.key]; ok {
				vals, from = vs, path+": "+s.key
			}
			for _, v := range vals {
				if s.path && from != s.env {
					v = expandTilde(v, getenv)
					if s.nearFile && v != "" && !filepath.IsAbs(v) {
						v = filepath.Join(filepath.Dir(path), v)
					}
				}
				if err := fl.Set(name, v); err != nil {
					return path, exitcode.Errorf(exitcode.Usage, "%s (for --%s): %v", from, name, err)
				}
			}
			if len(vals) > 0 {
				if f.Annotations == nil {
					f.Annotations = map[string][]string{}
				}
				f.Annotations[settingFromAnnotation] = []string{from}
			}
		}
	}
	return path, nil
}

// settingFromAnnotation is the flag annotation applySettings leaves on a
// flag it set: where the value came from ($PREBAKE_… or "FILE: key").
const settingFromAnnotation = "prebake-setting-from"

// settingFrom says where flag name of fl got its value: "" for the
// command line (or not set), else the variable or the prebake.yaml key.
func settingFrom(fl *pflag.FlagSet, name string) string {
	f := fl.Lookup(name)
	if f == nil || f.Annotations == nil {
		return ""
	}
	if v := f.Annotations[settingFromAnnotation]; len(v) > 0 {
		return v[0]
	}
	return ""
}

// expandTilde expands a leading "~" or "~/" of v to $HOME, as a shell
// does; "~user" and a "~" elsewhere are left alone.
func expandTilde(v string, getenv func(string) string) string {
	home := getenv("HOME")
	if home == "" {
		if h, err := os.UserHomeDir(); err == nil {
			home = h
		}
	}
	switch {
	case home == "":
		return v
	case v == "~":
		return home
	case strings.HasPrefix(v, "~/"):
		return filepath.Join(home, v[2:])
	}
	return v
}
