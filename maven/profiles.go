package maven

import (
	"io/fs"
	"os"
	"strconv"
	"strings"
)

// ProfileEnv is what profile activation is evaluated against, as Ivy
// 2.5.1's PomReader.PomProfileElement.isActive sees the JVM: os.name,
// os.arch, os.version, java.specification.version. Property activation
// sees the POM's own properties and the JVM's system properties (not the
// parents' properties: checked with the oracle); file activation the local
// file system, as Ivy does.
type ProfileEnv struct {
	OSName, OSArch, OSVersion string
	JDK                       string // java.specification.version
	// SystemProperties are the JVM's: defined for property activation.
	SystemProperties map[string]string
	// Stat is how file activation (<exists>, <missing>) sees the file
	// system; nil: no file exists. The model itself touches no file.
	Stat func(name string) (fs.FileInfo, error)
}

// DefaultProfileEnv is Linux, amd64, JDK 17: the oracle's JVM (conventions),
// with file activation against the local file system (os.Stat), as Ivy's.
// Values that depend on the machine (java.version, user.home, …) are
// defined but empty: a profile testing their value stays inactive.
func DefaultProfileEnv() ProfileEnv {
	sys := map[string]string{
		"os.name": "Linux", "os.arch": "amd64", "java.specification.version": "17",
		"java.vm.specification.version": "17", "java.class.version": "61.0",
		"file.separator": "/", "path.separator": ":", "line.separator": "\n",
		"file.encoding": "UTF-8", "java.specification.name": "Java Platform API Specification",
		"java.specification.vendor": "Oracle Corporation",
	}
	for _, k := range []string{"java.version", "java.vendor", "java.vendor.url", "java.home", "java.vm.name",
		"java.vm.vendor", "java.vm.version", "java.runtime.name", "java.runtime.version", "java.class.path",
		"java.library.path", "java.io.tmpdir", "os.version", "user.name", "user.home", "user.dir",
		"java.vm.specification.name", "java.vm.specification.vendor", "java.version.date", "java.vendor.version",
		"sun.arch.data.model", "user.language", "user.country", "native.encoding", "stdout.encoding", "stderr.encoding",
		"sun.jnu.encoding", "jdk.debug", "sun.boot.library.path", "sun.java.launcher", "sun.cpu.endian", "sun.io.unicode.encoding",
		"sun.management.compiler", "java.vm.compressedOopsMode", "java.vm.info", "sun.java.command", "user.timezone"} {
		sys[k] = ""
	}
	return ProfileEnv{OSName: "Linux", OSArch: "amd64", JDK: "17", SystemProperties: sys, Stat: os.Stat}
}

// activeProfiles are the profiles PomReader activates: activeByDefault OR
// property OR os OR jdk OR file.
func (l *Loader) activeProfiles(p *project, properties map[string]string) []*profile {
	var out []*profile
	for i := range p.Profiles {
		pr := &p.Profiles[i]
		if l.Env.active(pr.Activation, properties) {
			out = append(out, pr)
		}
	}
	return out
}

// active reports whether an <activation> activates its profile.
func (env ProfileEnv) active(a *activation, properties map[string]string) bool {
	if a == nil {
		return false
	}
	return a.ActiveByDefault || byProperty(a.Property, properties) ||
		env.byOS(a.OS) || env.byJDK(a.JDK) || env.byFile(a.File)
}

// byProperty: isActivatedByProperty. "!name" negates; without a value the
// property must be defined, with one it must equal it.
func byProperty(pp *activationProperty, properties map[string]string) bool {
	if pp == nil {
		return false
	}
	name := strings.TrimSpace(pp.Name)
	if name == "" {
		return false
	}
	neg := name[0] == '!'
	if neg {
		name = name[1:]
	}
	if name == "" {
		return false
	}
	var hit bool
	if v := strings.TrimSpace(pp.Value); v == "" {
		_, hit = properties[name]
	} else {
		pv, ok := properties[name]
		hit = ok && pv == v
	}
	return hit != neg
}

// byOS: isActiveByOS. name, arch and version must equal os.name, os.arch
// and os.version; os.name must contain family (case-sensitively, so
// "unix" does not match "Linux"); at least one must be given.
func (env ProfileEnv) byOS(o *activationOS) bool {
	if o == nil {
		return false
	}
	name, family, arch, version := trimmed(o.Name), trimmed(o.Family), trimmed(o.Arch), trimmed(o.Version)
	if name != nil && *name != env.OSName {
		return false
	}
	if family != nil && !strings.Contains(env.OSName, *family) {
		return false
	}
	if arch != nil && *arch != env.OSArch {
		return false
	}
	if version != nil && *version != env.OSVersion {
		return false
	}
	return name != nil || family != nil || arch != nil || version != nil
}

func trimmed(p *string) *string {
	if p == nil {
		return nil
	}
	s := strings.TrimSpace(*p)
	return &s
}

// byJDK: isActiveByJDK with MavenVersionRangeParser: "!" negates; a single
// version must equal java.specification.version ("17" and "17.0" are active
// on 17, "1.8" is not: no prefix match, checked with the oracle); "[a,b)"
// etc. are ranges, several ranges are alternatives.
func (env ProfileEnv) byJDK(jdk *string) bool {
	if jdk == nil {
		return false
	}
	r := strings.TrimSpace(*jdk)
	neg := strings.HasPrefix(r, "!")
	if neg {
		r = strings.TrimSpace(r[1:])
	}
	in, ok := jdkInRange(r, env.JDK)
	if !ok {
		return false
	}
	return in != neg
}

// jdkInRange is MavenVersionRangeParser.currentJavaVersionInRange; ok is
// false when the range does not parse (Ivy then treats it as inactive).
func jdkInRange(r, java string) (in, ok bool) {
	v, ok := dewey(java)
	if !ok || strings.TrimSpace(r) == "" {
		return false, false
	}
	parts := strings.Split(r, ",")
	if len(parts) == 1 {
		lo, ok := dewey(stripBound(parts[0]))
		if !ok {
			return false, false
		}
		t := strings.TrimSpace(parts[0])
		return accepts(v, lo, !strings.HasPrefix(t, "("), lo, !strings.HasSuffix(t, ")")), true
	}
	if len(parts)%2 != 0 {
		return false, false
	}
	for i := 0; i < len(parts); i += 2 {
		a, b := strings.TrimSpace(parts[i]), strings.TrimSpace(parts[i+1])
		var lo, hi []int
		if x := stripBound(a); x != "" {
			if lo, ok = dewey(x); !ok {
				return false, false
			}
		}
		if x := stripBound(b); x != "" {
			if hi, ok = dewey(x); !ok {
				return false, false
			}
		}
		if accepts(v, lo, !strings.HasPrefix(a, "("), hi, !strings.HasSuffix(b, ")")) {
			return true, true
		}
	}
	return false, true
}

func stripBound(s string) string { return strings.Trim(strings.TrimSpace(s), "[]()") }

func accepts(v, lo []int, loIncl bool, hi []int, hiIncl bool) bool {
	if lo != nil {
		c := cmpDewey(v, lo)
		if c < 0 || (c == 0 && !loIncl) {
			return false
		}
	}
	if hi != nil {
		c := cmpDewey(v, hi)
		if c > 0 || (c == 0 && !hiIncl) {
			return false
		}
	}
	return true
}

// dewey parses a DeweyDecimal ("1.8", "17").
func dewey(s string) ([]int, bool) {
	var out []int
	for _, p := range strings.Split(strings.TrimSpace(s), ".") {
		n, err := strconv.Atoi(p)
		if err != nil {
			return nil, false
		}
		out = append(out, n)
	}
	return out, true
}

func cmpDewey(a, b []int) int {
	for i := 0; i < len(a) || i < len(b); i++ {
		var x, y int
		if i < len(a) {
			x = a[i]
		}
		if i < len(b) {
			y = b[i]
		}
		if x != y {
			if x < y {
				return -1
			}
			return 1
		}
	}
	return 0
}

// byFile: isActiveByFile, against env.Stat (Ivy does not interpolate the
// path).
func (env ProfileEnv) byFile(f *activationFile) bool {
	if f == nil {
		return false
	}
	exists := func(name string) bool {
		if env.Stat == nil {
			return false
		}
		_, err := env.Stat(name)
		return err == nil
	}
	if m := strings.TrimSpace(f.Missing); m != "" && !exists(m) {
		return true
	}
	if e := strings.TrimSpace(f.Exists); e != "" && exists(e) {
		return true
	}
	return false
}

// ownProperties are the POM's <properties>, then the active profiles'.
func ownProperties(p *project, active []*profile) [][2]string {
	var out [][2]string
	add := func(pp properties) {
		for _, e := range pp {
			out = append(out, [2]string{e.Name, strings.TrimSpace(e.Value)})
		}
	}
	add(p.Properties)
	for _, pr := range active {
		add(pr.Properties)
	}
	return out
}

// ownManaged are the POM's dependencyManagement entries, then the active
// profiles'.
func ownManaged(p *project, active []*profile) []pomDependency {
	out := append([]pomDependency(nil), p.DependencyManagement.Dependencies...)
	for _, pr := range active {
		out = append(out, pr.DependencyManagement.Dependencies...)
	}
	return out
}

// ownDeps are the POM's dependencies, then the active profiles'.
func ownDeps(p *project, active []*profile) []pomDependency {
	out := append([]pomDependency(nil), p.Dependencies...)
	for _, pr := range active {
		out = append(out, pr.Dependencies...)
	}
	return out
}

// relocationOf is distributionManagement.relocation (a profile's is not
// read).
func relocationOf(p *project) *relocation {
	if p.DistributionManagement == nil {
		return nil
	}
	return p.DistributionManagement.Relocation
}
