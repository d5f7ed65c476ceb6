// Package upgrade answers the question a platform team asks before moving
// a job to another Spark line: what changes? Plan maps the job's direct
// coordinates to the target line (Scala suffix, Spark's own modules, the
// third-party artifacts with no build for it), resolves both sides with
// their lines' Ivy (resolver.IvyOf), compares the two sets jar by jar
// (internal/lockdiff) with the paths that brought each change in
// (resolver.Why), checks the target set against a target base image (the
// report a strict bake image acts on) and, for a k8s:// job, compares the
// objects the two lines' spark-submit would create (submit/k8s/native).
package upgrade

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/prebake/prebake/errdefs"
	"github.com/prebake/prebake/internal/lockdiff"
	"github.com/prebake/prebake/internal/revision"
	"github.com/prebake/prebake/layers"
	"github.com/prebake/prebake/lock"
	"github.com/prebake/prebake/maven"
	"github.com/prebake/prebake/resolver"
	"github.com/prebake/prebake/submit"
)

// Input is one job and the line to move it to.
type Input struct {
	// Request is the job's resolution (packages, repositories, excludes,
	// conflict mode, cache, …). Its SparkVersion is ignored (From and To
	// say it) and so are LockPath and Frozen: nothing is written.
	Request resolver.Request
	// Argv is the job's spark-submit argv (without spark-submit), optional:
	// its --packages, --repositories and --exclude-packages (and their
	// conf keys) add to Request's, and a k8s:// master in cluster mode
	// gets the Kubernetes comparison.
	Argv []string
	// Environ is the submitter's environment ("K=V") for Argv.
	Environ []string
	// Manifest is the job's SparkApplication (ReadSparkApplication),
	// optional: its packages add to Request's, its spec.sparkVersion (else
	// its image's tag) is the current version unless From says, and its
	// image is reported as the current line's.
	Manifest *ManifestJob
	// From is the job's current Spark version (3.5.x needs its patch);
	// "" takes the version of the job's org.apache.spark modules.
	From string
	// To is the target: a line ("4.0") or a version ("4.0.1"). With a line,
	// Spark's modules move to the newest release of the line the
	// repositories have.
	To string
	// Base is the target base image (a registry reference or oci:PATH:tag),
	// optional: the target set is checked against its jars.
	Base string
	// BaseOptions reach the registry (auth, transport).
	BaseOptions []layers.Option
}

// Report is the answer. Its JSON form is the upgrade-report document of
// docs/json-output.md. Lists are never null.
type Report struct {
	From Line `json:"from"`
	To   Line `json:"to"`
	// Coordinates are the job's direct coordinates, each with the one
	// used for the target line.
	Coordinates []Coordinate `json:"coordinates"`
	// Jars are the jars that differ between the two resolved sets, sorted
	// by module.
	Jars []JarChange `json:"jars"`
	// Summary counts Jars by change.
	Summary lockdiff.Summary `json:"summary"`
	// Base is the check of the target set against the target base image
	// (absent without one).
	Base *BaseCheck `json:"base,omitempty"`
	// Kubernetes is the difference between the objects the two lines'
	// spark-submit would create (absent for a job that is not k8s://
	// cluster mode).
	Kubernetes *KubernetesDiff `json:"kubernetes,omitempty"`
	// Problems are what breaks on the target line as the job stands.
	Problems []Problem `json:"problems"`
	// FromLock and ToLock are the two resolved sets (not part of the
	// document: From and To name them by lock hash).
	FromLock *lock.File `json:"-"`
	ToLock   *lock.File `json:"-"`
}

// Line is one side: the Spark version, its Scala binary, the Ivy the
// resolution followed and the resolved set.
type Line struct {
	Spark string `json:"spark"`
	Scala string `json:"scala"`
	// Ivy is "2.5.1" for the versions whose Ivy predates 2.5.2 (IVY-1642),
	// else "2.5.2+".
	Ivy      string `json:"ivy"`
	Packages string `json:"packages"`
	LockHash string `json:"lockHash"`
	Jars     int    `json:"jars"`
	// Image is the job's Spark image (a SparkApplication's spec.image),
	// on the current line only.
	Image string `json:"image,omitempty"`
}

// Coordinate changes.
const (
	Unchanged   = "unchanged"    // the same coordinate on the target line
	SparkModule = "spark-module" // org.apache.spark: moved to the target's version (and Scala)
	ScalaSuffix = "scala-suffix" // the target's Scala build, same version
	// SparkLineArtifact is a third-party artifact built per Spark line,
	// whose name carries the line (iceberg-spark-runtime-3.5_2.12,
	// sedona-spark-shaded-3.5_2.12): the target line's artifact (and
	// Scala), same version.
	SparkLineArtifact = "spark-line-artifact"
	NoTargetBuild     = "no-target-build" // no build for the target at this version: Newest is used when there is one
)

// Coordinate is one direct coordinate of the job.
type Coordinate struct {
	From   string `json:"from"`
	To     string `json:"to,omitempty"` // "" when the target has no build at all
	Change string `json:"change"`
	// Newest is, for NoTargetBuild, the newest version with a build for
	// the target ("" when none).
	Newest string `json:"newest,omitempty"`
	// BuiltFor is, for NoTargetBuild, the Spark line the target build at
	// the job's version was compiled against (its POM's org.apache.spark
	// dependency), when that is what rules it out.
	BuiltFor string `json:"builtFor,omitempty"`
}

// JarChange is one jar (module) that differs, with the paths that brought
// it in on the side where it is (the target's, the current line's for a
// removed jar).
type JarChange struct {
	Module string `json:"module"`
	// Change is added, removed, upgrade, downgrade or version
	// (lockdiff's kinds).
	Change string     `json:"change"`
	From   string     `json:"from,omitempty"`
	To     string     `json:"to,omitempty"`
	Why    [][]string `json:"why"`
}

// BaseCheck is the target set against the target base image: the
// classpath report `bake image` makes (layers.Report), the conflicts
// split into what the baked image would shadow (another version) and
// duplicate (the same one).
type BaseCheck struct {
	Image     string            `json:"image"`
	Shadowed  []layers.Conflict `json:"shadowed"`
	Duplicate []layers.Conflict `json:"duplicate"`
	Report    *layers.Report    `json:"report"`
}

// Problem kinds.
const (
	ProblemNoTargetBuild = "no-target-build" // errdefs.NotFound
	// ProblemTargetUnresolved: the target set does not resolve (a module
	// its coordinates bring in is missing): errdefs.NotFound. The report
	// then has no target lock, no jar changes and no base check.
	ProblemTargetUnresolved = "target-unresolved"
	// The base image's warnings (layers.Warn*) and a base whose Spark or
	// Scala is not the target's: errdefs.Invalid.
	ProblemBaseLine = "base-line"
)

// Problem is one thing that breaks on the target line.
type Problem struct {
	Kind    string `json:"kind"`
	Coord   string `json:"coord,omitempty"`
	Message string `json:"message"`
}

// Breaks is the error of a report with problems (nil without): it is
// errdefs.NotFound when an artifact has no build for the target, else
// errdefs.Invalid (a mismatch).
func (r *Report) Breaks() error {
	if len(r.Problems) == 0 {
		return nil
	}
	kind := errdefs.Invalid
	msgs := make([]string, len(r.Problems))
	for i, p := range r.Problems {
		msgs[i] = p.Message
		if p.Kind == ProblemNoTargetBuild || p.Kind == ProblemTargetUnresolved {
			kind = errdefs.NotFound
		}
	}
	return errdefs.New(kind, fmt.Errorf("upgrading Spark %s to %s: %d problem(s): %s", r.From.Spark, r.To.Spark, len(msgs), strings.Join(msgs, "; ")))
}

// scalaSuffixRe is an artifact's Scala binary suffix.
var scalaSuffixRe = regexp.MustCompile(`_(2\.1[0-3]|3)$`)

// ScalaOf is the default Scala binary of Spark version v: 2.13 from 4.0
// (the only one), else 2.12.
func ScalaOf(v string) string {
	if major(v) >= 4 {
		return "2.13"
	}
	return "2.12"
}

func major(v string) int {
	n, _ := strconv.Atoi(strings.SplitN(v, ".", 2)[0])
	return n
}

func isRelease(v string) bool {
	return !strings.Contains(v, "SNAPSHOT") && !strings.Contains(v, "preview")
}

// Plan builds the report.
func Plan(ctx context.Context, in Input, opts ...resolver.Option) (*Report, error) {
	req := in.Request
	req.LockPath, req.Frozen = "", false
	var sub *submit.Submission
	if len(in.Argv) > 0 {
		s, err := submit.LoadSubmission(in.Argv, in.Environ)
		if err != nil {
			return nil, err
		}
		sub = s
		addPackages(&req, s.Packages())
	}
	from := in.From
	if m := in.Manifest; m != nil {
		addPackages(&req, m.Packages)
		if from == "" {
			from = m.sparkVersionOf()
		}
	}
	var direct []resolver.Coordinate
	for _, p := range req.Packages {
		cs, err := resolver.ParseCoordinates(p)
		if err != nil {
			return nil, err
		}
		direct = append(direct, cs...)
	}
	if len(direct) == 0 {
		return nil, errdefs.Errorf(errdefs.BadArgument, "no coordinate: give the job's packages, a lock, its spark-submit argv or its SparkApplication")
	}
	if strings.TrimSpace(in.To) == "" {
		return nil, errdefs.Errorf(errdefs.BadArgument, "no target Spark line: give one, e.g. 4.0 or 4.0.1")
	}
	if from == "" {
		for _, c := range direct {
			if c.Group == "org.apache.spark" {
				from = c.Version
				break
			}
		}
		if from == "" {
			return nil, errdefs.Errorf(errdefs.BadArgument, "the job's Spark version is unknown (no org.apache.spark module among its packages): give it, e.g. 3.5.1")
		}
	}
	if _, err := resolver.IvyOf(from); err != nil {
		return nil, err
	}
	src, err := resolver.NewSource(ctx, req, opts...)
	if err != nil {
		return nil, err
	}
	fromScala := ScalaOf(from)
	for _, c := range direct {
		if m := scalaSuffixRe.FindStringSubmatch(c.Artifact); m != nil {
			fromScala = m[1]
			break
		}
	}

	rep := &Report{Coordinates: []Coordinate{}, Jars: []JarChange{}, Problems: []Problem{}}
	to, err := targetVersion(ctx, src, in.To, direct)
	if err != nil {
		return nil, err
	}
	toScala := fromScala
	if major(to) >= 4 {
		toScala = "2.13"
	}
	if _, err := resolver.IvyOf(to); err != nil {
		return nil, err
	}

	var toPackages []string
	poms := maven.NewLoader(pomFetcher{src})
	for _, c := range direct {
		co, err := mapCoordinate(ctx, src, c, toScala, from, to)
		built := ""
		if err == nil {
			co, built, err = checkBuiltFor(ctx, src, poms, co, revision.MajorMinor(to))
		}
		if err != nil {
			return nil, err
		}
		rep.Coordinates = append(rep.Coordinates, co)
		if co.Change == NoTargetBuild {
			msg := fmt.Sprintf("%s has no build for Spark %s (Scala %s)", c, to, toScala)
			if co.BuiltFor != "" {
				msg = fmt.Sprintf("%s is built for Spark %s (its POM's Spark dependency), not %s", built, co.BuiltFor, revision.MajorMinor(to))
			}
			if co.Newest != "" {
				msg += "; the newest with one is " + co.Newest + " (used below)"
			} else {
				msg += " at any version (left out below)"
			}
			rep.Problems = append(rep.Problems, Problem{Kind: ProblemNoTargetBuild, Coord: c.String(), Message: msg})
		}
		if co.To != "" {
			toPackages = append(toPackages, co.To)
		}
	}

	fromReq := req
	fromReq.SparkVersion = from
	fromRes, err := resolver.Resolve(ctx, fromReq, opts...)
	if err != nil {
		return nil, fmt.Errorf("resolving for Spark %s: %w", from, err)
	}
	rep.From = line(from, fromScala, fromReq.Packages, fromRes.Lock)
	rep.FromLock = fromRes.Lock
	if in.Manifest != nil {
		rep.From.Image = in.Manifest.Image
	}
	toReq := req
	toReq.SparkVersion, toReq.Packages = to, []string{strings.Join(toPackages, ",")}
	rep.To = line(to, toScala, toReq.Packages, nil)
	var toRes *resolver.Result
	if len(toPackages) > 0 {
		// A target set that does not resolve (a module the target's
		// version names is not in the repositories) is the report's
		// answer, as spark-submit's "unresolved dependency" would be.
		toRes, err = resolver.Resolve(ctx, toReq, opts...)
		if errors.Is(err, resolver.ErrNotFound) {
			rep.Problems = append(rep.Problems, Problem{Kind: ProblemTargetUnresolved,
				Message: fmt.Sprintf("the target set (%s) does not resolve for Spark %s: %v", rep.To.Packages, to, err)})
			toRes = nil
		} else if err != nil {
			return nil, fmt.Errorf("resolving for Spark %s: %w", to, err)
		}
	}
	if toRes != nil {
		if err := rep.compare(ctx, in, fromRes, toRes, from, to, toScala); err != nil {
			return nil, err
		}
	}
	if sub != nil {
		kd, err := kubernetesDiff(sub, from, to)
		if err != nil {
			return nil, err
		}
		rep.Kubernetes = kd
	}
	return rep, nil
}

// addPackages adds what a submission or a manifest would resolve to req.
func addPackages(req *resolver.Request, p submit.Packages) {
	if p.Packages != "" {
		req.Packages = append(req.Packages, p.Packages)
	}
	if p.Repositories != "" {
		req.Repositories = append(req.Repositories, p.Repositories)
	}
	if p.Excludes != "" {
		req.Excludes = append(req.Excludes, p.Excludes)
	}
	if p.IvySettings != "" && req.IvySettings == "" {
		req.IvySettings = p.IvySettings
	}
}

// line is one side; lf is nil for a set that did not resolve.
func line(v, scala string, packages []string, lf *lock.File) Line {
	ivy, _ := resolver.IvyOf(v)
	if ivy == "" {
		ivy = "2.5.2+"
	}
	l := Line{Spark: v, Scala: scala, Ivy: ivy, Packages: strings.Join(packages, ",")}
	if lf != nil {
		l.LockHash, l.Jars = lf.Hash(), len(lf.Artifacts)
	}
	return l
}

// targetVersion is to when it is a version, else the newest release of
// the line to that the job's Spark modules have (on the target's Scala);
// a line alone when the job has none.
func targetVersion(ctx context.Context, src resolver.Source, to string, direct []resolver.Coordinate) (string, error) {
	to = strings.TrimSpace(to)
	if len(to) > 64 || !regexp.MustCompile(`^\d+\.\d+(\.\d+([-.][0-9A-Za-z.-]+)?)?$`).MatchString(to) {
		return "", errdefs.Errorf(errdefs.BadArgument, "target %.64q: want a Spark line or version, e.g. 4.0 or 4.0.1", to)
	}
	if strings.Count(to, ".") >= 2 {
		return to, nil
	}
	scala := ScalaOf(to)
	best, spark := "", false
	for _, c := range direct {
		if c.Group != "org.apache.spark" {
			continue
		}
		spark = true
		a := scalaSuffixRe.ReplaceAllString(c.Artifact, "_"+scala)
		vs, err := src.Versions(ctx, c.Group, a)
		if err != nil && !errors.Is(err, resolver.ErrNotFound) {
			return "", err
		}
		for _, v := range vs {
			if isRelease(v) && revision.MajorMinor(v) == to && (best == "" || revision.Compare(v, best) > 0) {
				best = v
			}
		}
	}
	if best == "" {
		if to == "3.5" {
			return "", errdefs.Errorf(errdefs.BadArgument, "target 3.5: give the patch (3.5.0–3.5.8 follow Ivy 2.5.1, 3.5.9 and later Ivy 2.5.3)")
		}
		if spark {
			// The Spark modules would keep their old version under a
			// line that names none.
			return "", errdefs.Errorf(errdefs.NotFound, "no release of Spark line %s (Scala %s) in %s: give a version, e.g. %s.0, or a repository that has the line", to, scala, reposOf(src), to)
		}
		return to, nil
	}
	return best, nil
}

// reposOf names src's repositories (their URLs have no userinfo), when
// it tells them.
func reposOf(src resolver.Source) string {
	rs, ok := src.(interface{ Repositories() []resolver.Repository })
	if !ok || len(rs.Repositories()) == 0 {
		return "the job's repositories"
	}
	var names []string
	for _, r := range rs.Repositories() {
		names = append(names, r.Name+" ("+r.URL+")")
	}
	return strings.Join(names, ", ")
}

// sparkLineRe is an artifact name that carries a Spark line, with an
// optional Scala suffix: iceberg-spark-runtime-3.5_2.12.
var sparkLineRe = regexp.MustCompile(`^(.+-)(\d+\.\d+)(_(?:2\.1[0-3]|3))?$`)

// mapCoordinate is c on the target line.
func mapCoordinate(ctx context.Context, src resolver.Source, c resolver.Coordinate, scala, from, to string) (Coordinate, error) {
	if m := sparkLineRe.FindStringSubmatch(c.Artifact); m != nil && c.Group != "org.apache.spark" &&
		m[2] == revision.MajorMinor(from) && m[2] != revision.MajorMinor(to) {
		return mapSparkLineArtifact(ctx, src, c, m, scala, to)
	}
	m := scalaSuffixRe.FindStringSubmatch(c.Artifact)
	if c.Group == "org.apache.spark" {
		t := c
		if m != nil {
			t.Artifact = scalaSuffixRe.ReplaceAllString(c.Artifact, "_"+scala)
		}
		if strings.Count(to, ".") >= 2 {
			t.Version = to
		}
		ch := SparkModule
		if t == c {
			ch = Unchanged
		}
		return Coordinate{From: c.String(), To: t.String(), Change: ch}, nil
	}
	if m == nil || m[1] == scala {
		return Coordinate{From: c.String(), To: c.String(), Change: Unchanged}, nil
	}
	t := c
	t.Artifact = scalaSuffixRe.ReplaceAllString(c.Artifact, "_"+scala)
	vs, err := src.Versions(ctx, t.Group, t.Artifact)
	if err != nil && !errors.Is(err, resolver.ErrNotFound) {
		return Coordinate{}, err
	}
	if slices.Contains(vs, c.Version) {
		return Coordinate{From: c.String(), To: t.String(), Change: ScalaSuffix}, nil
	}
	return noTargetBuild(c, t, vs), nil
}

// mapSparkLineArtifact maps an artifact built per Spark line (m: its name
// split by sparkLineRe) to the target line's artifact at the same version,
// else to the newest version of the target line's artifact
// (NoTargetBuild, no To when the target line has none).
func mapSparkLineArtifact(ctx context.Context, src resolver.Source, c resolver.Coordinate, m []string, scala, to string) (Coordinate, error) {
	t := c
	t.Artifact = m[1] + revision.MajorMinor(to)
	if m[3] != "" {
		t.Artifact += "_" + scala
	}
	vs, err := src.Versions(ctx, t.Group, t.Artifact)
	if err != nil && !errors.Is(err, resolver.ErrNotFound) {
		return Coordinate{}, err
	}
	if slices.Contains(vs, c.Version) {
		return Coordinate{From: c.String(), To: t.String(), Change: SparkLineArtifact}, nil
	}
	return noTargetBuild(c, t, vs), nil
}

// noTargetBuild is c with no build t at its version: the newest release
// of t's versions vs, when there is one.
func noTargetBuild(c, t resolver.Coordinate, vs []string) Coordinate {
	newest := ""
	for _, v := range vs {
		if isRelease(v) && (newest == "" || revision.Compare(v, newest) > 0) {
			newest = v
		}
	}
	co := Coordinate{From: c.String(), Change: NoTargetBuild, Newest: newest}
	if newest != "" {
		t.Version = newest
		co.To = t.String()
	}
	return co
}

// compare fills the report from the two resolved sets: the target's line
// and lock, the jars that differ with the paths that brought them in, and
// the check against the target base image.
func (rep *Report) compare(ctx context.Context, in Input, fromRes, toRes *resolver.Result, from, to, toScala string) error {
	rep.To = line(to, toScala, []string{rep.To.Packages}, toRes.Lock)
	rep.ToLock = toRes.Lock
	d, err := lockdiff.Compare("Spark "+from, fromRes.Lock, "Spark "+to, toRes.Lock)
	if err != nil {
		return err
	}
	rep.Summary = d.Summary
	for _, m := range d.Modules {
		kind := m.Changes[0]
		switch kind {
		case lockdiff.Added, lockdiff.Removed, lockdiff.Upgrade, lockdiff.Downgrade, lockdiff.Version:
		default:
			continue // the same version from another repository or file name
		}
		g := fromRes.Graph
		if kind != lockdiff.Removed {
			g = toRes.Graph
		}
		j := JarChange{Module: m.Module, Change: kind, From: m.OldVersion(), To: m.NewVersion(), Why: [][]string{}}
		ga := strings.Join(strings.SplitN(m.Module, ":", 3)[:2], ":")
		if mods, err := resolver.Why(g, ga); err == nil {
			for _, mw := range mods {
				for _, p := range mw.Paths {
					if !p.Evicted {
						j.Why = append(j.Why, p.Nodes)
					}
				}
			}
		}
		rep.Jars = append(rep.Jars, j)
	}
	if in.Base == "" {
		return nil
	}
	bc, err := checkBase(ctx, in, toRes, to, toScala)
	if err != nil {
		return err
	}
	rep.Base = bc
	for _, w := range bc.Report.Warnings {
		rep.Problems = append(rep.Problems, Problem{Kind: ProblemBaseLine + ":" + w.Kind, Coord: w.Coord, Message: w.Message})
	}
	if v := bc.Report.BaseSparkVersion; v != "" && revision.MajorMinor(v) != revision.MajorMinor(to) {
		rep.Problems = append(rep.Problems, Problem{Kind: ProblemBaseLine, Message: fmt.Sprintf("the base image %s has Spark %s, not the target line %s", in.Base, v, revision.MajorMinor(to))})
	}
	if s := bc.Report.BaseScalaBinary; s != "" && s != toScala {
		rep.Problems = append(rep.Problems, Problem{Kind: ProblemBaseLine, Message: fmt.Sprintf("the base image %s has Scala %s, not the target's %s", in.Base, s, toScala)})
	}
	return nil
}
