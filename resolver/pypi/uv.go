package pypi

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/prebake/prebake/errdefs"
	"github.com/prebake/prebake/internal/redact"
)

// UVVersion is the uv the project's setup installs
// (hack/infra.d/72-uv.sh) and the one prebake is tested with.
const UVVersion = "0.13.8"

// ErrNoUV is matched (errors.Is) when an input needs resolving and no uv
// is found: errdefs.Unavailable (exit 69, sysexits' "a support program
// does not exist"), the message saying how to get it.
var ErrNoUV = errors.New("uv not found")

// FindUV finds the uv binary: $PREBAKE_UV, then uv on $PATH, then
// $PREBAKE_CI_CACHE/uv-<UVVersion>/bin/uv (PREBAKE_CI_CACHE defaulting
// to /var/cache/prebake-ci), where the project's setup installs it.
func FindUV(getenv func(string) (string, bool)) (string, error) {
	env := func(k string) string { v, _ := getenv(k); return v }
	if p := env("PREBAKE_UV"); p != "" {
		if !executable(p) {
			return "", errdefs.Optionf(errdefs.BadArgument, "PREBAKE_UV", "PREBAKE_UV=%s is not an executable file", p)
		}
		return p, nil
	}
	for _, dir := range filepath.SplitList(env("PATH")) {
		if dir == "" {
			continue
		}
		if p := filepath.Join(dir, "uv"); executable(p) {
			return p, nil
		}
	}
	ci := env("PREBAKE_CI_CACHE")
	if ci == "" {
		ci = "/var/cache/prebake-ci"
	}
	if p := filepath.Join(ci, "uv-"+UVVersion, "bin", "uv"); executable(p) {
		return p, nil
	}
	return "", errdefs.New(errdefs.Unavailable, fmt.Errorf("%w: requirements that are not fully pinned are resolved by uv, and none is on PATH, at $PREBAKE_UV or in %s; install it (python3 -m pip install uv==%s, or the project's hack/infra.d/72-uv.sh), or give a fully pinned input that needs no resolver: a pylock.toml or uv.lock, or a requirements file with ==V and --hash on every line", ErrNoUV, filepath.Join(ci, "uv-"+UVVersion, "bin"), UVVersion))
}

func executable(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular() && st.Mode().Perm()&0o111 != 0
}

// UVPlatform is the target as uv's --python-platform names it:
// "x86_64-manylinux_2_36" for glibc 2.36 (uv knows manylinux 2.17 to
// 2.40; a newer glibc is resolved as 2.40, whose wheels it loads),
// "aarch64-unknown-linux-musl" for musl. Other machines are
// errdefs.BadArgument.
func (t Target) UVPlatform() (string, error) {
	m := t.machine()
	if m != "x86_64" && m != "aarch64" {
		return "", errdefs.Errorf(errdefs.BadArgument, "uv resolves for x86_64 and aarch64 Linux only, not %s: give a fully pinned input for this target", m)
	}
	if t.Glibc != "" && t.Glibc != "0" {
		major, minor, err := majorMinorOf(t.Glibc)
		if err != nil || major != 2 || minor < 17 {
			return "", errdefs.Errorf(errdefs.BadArgument, "glibc %q: uv resolves for glibc 2.17 or newer", t.Glibc)
		}
		minor = min(minor, 40)
		if minor > 17 && minor < 28 {
			minor = 17 // uv names no manylinux between 2.17 and 2.28
		} else if minor > 28 && minor < 31 {
			minor = 28
		}
		return fmt.Sprintf("%s-manylinux_2_%d", m, minor), nil
	}
	if t.Musl != "" {
		return m + "-unknown-linux-musl", nil
	}
	return "", errdefs.Errorf(errdefs.BadArgument, "a target with neither glibc nor musl: no Linux wheel fits")
}

func majorMinorOf(v string) (int, int, error) {
	var a, b int
	if _, err := fmt.Sscanf(v, "%d.%d", &a, &b); err != nil {
		return 0, 0, err
	}
	return a, b, nil
}

// maxUVOutput bounds what is kept of uv's stderr for an error.
const maxUVOutput = 8 << 10

// CompileWithUV resolves in's requirements for t with uv (`uv pip
// compile`), wheels only, and returns them fully pinned with every
// file's sha256 (uv's --generate-hashes), as a requirements Input whose
// requirements keep the origin of the line that asked for them (or the
// input file for a dependency). uv is given the machine's indexes and
// find-links explicitly (UV_DEFAULT_INDEX, UV_INDEX and --find-links;
// its own configuration files and UV_* variables are ignored; the
// certificate as SSL_CERT_FILE) and may not download a Python. Its
// index strategy is its default, first-index: a package is taken from
// the first index that has it (no dependency confusion through an extra
// index). A resolution uv fails is errdefs.NotFound with uv's message.
func CompileWithUV(ctx context.Context, uv string, in *Input, t Target, cfg *IndexConfig) (*Input, error) {
	if in.Format != FormatRequirements && in.Format != FormatPyproject {
		return nil, errdefs.Errorf(errdefs.BadArgument, "%s: a %s input is resolved already", in.File, in.Format)
	}
	plat, err := t.UVPlatform()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "prebake-uv-*")
	if err != nil {
		return nil, errdefs.New(errdefs.CantWrite, err)
	}
	defer os.RemoveAll(dir)
	var reqs, cons bytes.Buffer
	for _, r := range in.Requirements {
		reqs.WriteString(r.String() + "\n")
	}
	for _, r := range in.Constraints {
		cons.WriteString(r.String() + "\n")
	}
	reqFile, conFile, outFile := filepath.Join(dir, "requirements.in"), filepath.Join(dir, "constraints.txt"), filepath.Join(dir, "requirements.txt")
	if err := os.WriteFile(reqFile, reqs.Bytes(), 0o600); err != nil {
		return nil, errdefs.New(errdefs.CantWrite, err)
	}
	args := []string{"pip", "compile", "-q", "--no-header", "--no-annotate", "--no-config",
		"--generate-hashes", "--only-binary", ":all:", "--python-version", t.fullVersion(),
		"--python-platform", plat, "-o", outFile}
	if cons.Len() > 0 {
		if err := os.WriteFile(conFile, cons.Bytes(), 0o600); err != nil {
			return nil, errdefs.New(errdefs.CantWrite, err)
		}
		args = append(args, "-c", conFile)
	}
	if in.Pre {
		args = append(args, "--prerelease", "allow")
	}
	for _, fl := range cfg.FindLinks {
		args = append(args, "--find-links", fl)
	}
	env := []string{"UV_PYTHON_DOWNLOADS=never", "UV_NO_PROGRESS=1"}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "UV_") && !strings.HasPrefix(kv, "SSL_CERT_FILE=") {
			env = append(env, kv)
		}
	}
	if cfg.NoIndex {
		args = append(args, "--no-index")
	} else {
		env = append(env, "UV_DEFAULT_INDEX="+cfg.IndexURL)
		if len(cfg.ExtraIndexURLs) > 0 {
			env = append(env, "UV_INDEX="+strings.Join(cfg.ExtraIndexURLs, " "))
		}
	}
	if cfg.Cert != "" {
		env = append(env, "SSL_CERT_FILE="+cfg.Cert)
	}
	args = append(args, reqFile)
	cmd := exec.CommandContext(ctx, uv, args...)
	cmd.Env, cmd.Dir = env, dir
	var stderr capped
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		msg := strings.TrimSpace(redact.String(stderr.String()))
		for _, u := range append([]string{cfg.IndexURL}, cfg.ExtraIndexURLs...) {
			if u != "" {
				msg = strings.ReplaceAll(msg, u, noUserinfo(u))
			}
		}
		hint := ""
		if strings.Contains(msg, "no usable wheels") || strings.Contains(msg, "no wheels") {
			hint = "; prebake installs wheels only, no build runs: build a wheel of that package into a find-links directory of the machine's pip configuration, or ask for a version that has wheels for the target"
		}
		return nil, errdefs.Errorf(errdefs.NotFound, "%s: uv could not resolve the requirements for Python %s on %s (%v): %s%s", in.File, t.fullVersion(), plat, err, msg, hint)
	}
	out, err := ReadRequirements(ctx, outFile)
	if err != nil {
		return nil, errdefs.Errorf(errdefs.Internal, "%s: uv's output: %v", in.File, err)
	}
	asked := map[string]Origin{}
	for _, r := range in.Requirements {
		asked[r.Name] = r.Origin
	}
	for i := range out.Requirements {
		src, ok := asked[out.Requirements[i].Name]
		if !ok {
			src = Origin{File: in.File}
		}
		out.Requirements[i].Origin = src
	}
	out.File = in.File
	return out, nil
}

// capped keeps the first maxUVOutput bytes written.
type capped struct{ bytes.Buffer }

func (c *capped) Write(p []byte) (int, error) {
	if room := maxUVOutput - c.Len(); room > 0 {
		c.Buffer.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}
