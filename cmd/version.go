package cmd

import (
	"runtime/debug"
)

// version is set at link time (make build: -ldflags "-X
// github.com/prebake/prebake/cmd.version=$(git describe)"); otherwise it
// comes from the build info: the module version of a `go install …@vX`,
// else the VCS revision of a checkout build.
var version = ""

func buildVersion() string {
	if version != "" {
		return version
	}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "(unknown)"
	}
	return versionOf(bi)
}

// versionOf is the version that bi names: its module version, else
// "(devel)" with the VCS revision when it was stamped.
func versionOf(bi *debug.BuildInfo) string {
	v := bi.Main.Version
	var rev, dirty string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = "-dirty"
			}
		}
	}
	if (v == "" || v == "(devel)") && rev != "" {
		if len(rev) > 12 {
			rev = rev[:12]
		}
		return "(devel) " + rev + dirty
	}
	if v == "" {
		return "(devel)"
	}
	return v
}
