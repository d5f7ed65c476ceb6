package wheel

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/prebake/prebake/errdefs"
)

// Target is the Python of an image: what decides which wheels it can load.
// Only Linux targets are known (Spark images are Linux).
type Target struct {
	// PythonVersion is "major.minor" ("3.11").
	PythonVersion string
	// Implementation is the interpreter's short name: "cp" (the default)
	// or another PEP 425 name ("pp").
	Implementation string
	// ABI is the interpreter's ABI tag. The default for CPython is
	// "cp311" ("cp37m" below 3.8); a free-threaded build says "cp313t"
	// (abi3 does not apply to it).
	ABI string
	// Platform is the machine: "x86_64", "aarch64", "ppc64le", "s390x"…
	// The OCI names "amd64" and "arm64" are accepted.
	Platform string
	// Glibc is the image's glibc version ("2.36"); "" or "0" for none
	// (musl, or unknown: no manylinux wheel fits).
	Glibc string
	// Musl is the image's musl version ("1.2") for musllinux wheels; "" for
	// none.
	Musl string
}

// manylinuxArchs are the machines manylinux wheels exist for (PEP 599, 600).
var manylinuxArchs = map[string]bool{"x86_64": true, "i686": true, "aarch64": true, "armv7l": true,
	"ppc64": true, "ppc64le": true, "s390x": true, "riscv64": true, "loongarch64": true}

// legacyManylinux are the glibc versions with a legacy alias (PEP 513, 571, 599).
var legacyManylinux = map[[2]int]string{{2, 17}: "manylinux2014", {2, 12}: "manylinux2010", {2, 5}: "manylinux1"}

// lastGlibcMinor stands for the last minor version of an older glibc major,
// as packaging guesses it (there is none yet).
const lastGlibcMinor = 50

// Tags returns the tags the target supports, best first, in the order pip
// picks wheels by (pip._internal.utils.compatibility_tags.get_supported,
// packaging.tags' sys_tags but for <interpreter>-none-any) on Linux: the
// interpreter's ABI, then abi3 and none for each platform (manylinux from
// the target's glibc down with the legacy aliases, musllinux, then
// linux_<arch>), abi3 of older CPython 3 minors down to 3.2, then
// py3x-none-<platform>, <interpreter>-none-any and py3x-none-any.
// A target it cannot read is errdefs.BadArgument.
func (t Target) Tags() ([]Tag, error) {
	major, minor, err := majorMinor("Target.PythonVersion", t.PythonVersion)
	if err != nil {
		return nil, err
	}
	plats, err := t.platforms()
	if err != nil {
		return nil, err
	}
	impl := strings.ToLower(t.Implementation)
	if impl == "" {
		impl = "cp"
	}
	if !nameChars(impl, "") {
		return nil, errdefs.Optionf(errdefs.BadArgument, "Target.Implementation", "implementation %q: want letters and digits", impl)
	}
	nodot := func(minor int) string { return strconv.Itoa(major) + strconv.Itoa(minor) }
	interp := impl + nodot(minor)
	abi := strings.ToLower(t.ABI)
	if abi == "" && impl == "cp" {
		abi = interp
		if major == 3 && minor < 8 {
			abi += "m"
		}
	}
	if abi != "" && !nameChars(abi, "_") {
		return nil, errdefs.Optionf(errdefs.BadArgument, "Target.ABI", "ABI %q: want letters, digits and '_'", abi)
	}

	var tags []Tag
	add := func(interp, abi string, plats ...string) {
		for _, p := range plats {
			tags = append(tags, Tag{interp, abi, p})
		}
	}
	if abi != "" && abi != "abi3" && abi != "none" {
		add(interp, abi, plats...)
	}
	abi3 := impl == "cp" && major == 3 && minor >= 2 && !strings.HasSuffix(abi, "t")
	if abi3 {
		add(interp, "abi3", plats...)
	}
	add(interp, "none", plats...)
	if abi3 {
		for m := minor - 1; m >= 2; m-- {
			add("cp"+nodot(m), "abi3", plats...)
		}
	}
	// packaging's compatible_tags.
	pys := []string{"py" + nodot(minor), "py" + strconv.Itoa(major)}
	for m := minor - 1; m >= 0; m-- {
		pys = append(pys, "py"+nodot(m))
	}
	for _, py := range pys {
		add(py, "none", plats...)
	}
	add(interp, "none", "any")
	for _, py := range pys {
		add(py, "none", "any")
	}
	return tags, nil
}

// platforms returns the target's platform tags, best first.
func (t Target) platforms() ([]string, error) {
	arch := strings.ToLower(t.Platform)
	switch arch {
	case "amd64":
		arch = "x86_64"
	case "arm64":
		arch = "aarch64"
	}
	if !nameChars(arch, "_") {
		return nil, errdefs.Optionf(errdefs.BadArgument, "Target.Platform", "platform %q: want a machine name such as x86_64 or aarch64", t.Platform)
	}
	if t.Glibc != "" && t.Glibc != "0" && t.Musl != "" {
		return nil, errdefs.Optionf(errdefs.BadArgument, "Target.Musl", "a target has glibc %s or musl %s, not both", t.Glibc, t.Musl)
	}
	var plats []string
	if t.Glibc != "" && t.Glibc != "0" && manylinuxArchs[arch] {
		gmaj, gmin, err := majorMinor("Target.Glibc", t.Glibc)
		if err != nil {
			return nil, err
		}
		oldest := 17 // the oldest manylinux glibc but on x86 (2.5)
		if arch == "x86_64" || arch == "i686" {
			oldest = 5
		}
		for maj := gmaj; maj >= 2; maj-- {
			top, bottom := lastGlibcMinor, 0
			if maj == gmaj {
				top = gmin
			}
			if maj == 2 {
				bottom = oldest
			}
			for m := top; m >= bottom; m-- {
				plats = append(plats, fmt.Sprintf("manylinux_%d_%d_%s", maj, m, arch))
				if legacy := legacyManylinux[[2]int{maj, m}]; legacy != "" {
					plats = append(plats, legacy+"_"+arch)
				}
			}
		}
	}
	if t.Musl != "" {
		mmaj, mmin, err := majorMinor("Target.Musl", t.Musl)
		if err != nil {
			return nil, err
		}
		for m := mmin; m >= 0; m-- {
			plats = append(plats, fmt.Sprintf("musllinux_%d_%d_%s", mmaj, m, arch))
		}
	}
	return append(plats, "linux_"+arch), nil
}

// majorMinor parses "3.11" (a third part is ignored: "2.36.1").
func majorMinor(option, v string) (int, int, error) {
	parts := strings.SplitN(v, ".", 3)
	if len(parts) >= 2 {
		major, err1 := strconv.Atoi(parts[0])
		minor, err2 := strconv.Atoi(parts[1])
		if err1 == nil && err2 == nil && major >= 0 && minor >= 0 && major < 100 && minor < 1000 {
			return major, minor, nil
		}
	}
	return 0, 0, errdefs.Optionf(errdefs.BadArgument, option, "version %q: want major.minor", v)
}

// Compatible reports whether the target can load the wheel, and its rank:
// the index of its best tag in Tags (lower is better). It is false when
// the target is invalid (Tags says why).
func (t Target) Compatible(n Name) (rank int, ok bool) {
	tags, err := t.Tags()
	if err != nil {
		return 0, false
	}
	return rankOf(ranks(tags), n)
}

// Best returns the index in names of the wheel the target loads best: the
// lowest rank, then (PEP 427) the highest build tag; false when none fits or
// the target is invalid.
func (t Target) Best(names []Name) (int, bool) {
	tags, err := t.Tags()
	if err != nil {
		return 0, false
	}
	r := ranks(tags)
	best, bestRank := -1, 0
	for i, n := range names {
		rank, ok := rankOf(r, n)
		if ok && (best < 0 || rank < bestRank || rank == bestRank && buildLess(names[best].Build, n.Build)) {
			best, bestRank = i, rank
		}
	}
	return best, best >= 0
}

func ranks(tags []Tag) map[Tag]int {
	r := make(map[Tag]int, len(tags))
	for i, t := range tags {
		if _, dup := r[t]; !dup {
			r[t] = i
		}
	}
	return r
}

func rankOf(ranks map[Tag]int, n Name) (int, bool) {
	best, ok := 0, false
	for _, t := range n.Tags {
		if r, found := ranks[t]; found && (!ok || r < best) {
			best, ok = r, true
		}
	}
	return best, ok
}
