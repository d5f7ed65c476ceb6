package maven

import (
	"sort"
	"strings"

	"github.com/vifraa/gopom"
)

// ProfileEnv is what profile activation is evaluated against. Ivy 2.5.1's
// PomReader only honours <activeByDefault>true</activeByDefault> and
// property activation; JDK and OS are recorded for the follow-up that
// evaluates them (conventions: Linux + JDK 17).
type ProfileEnv struct {
	JDK        string
	OS         string
	Properties map[string]string
}

// DefaultProfileEnv is Linux + JDK 17 with no system properties.
func DefaultProfileEnv() ProfileEnv { return ProfileEnv{JDK: "17", OS: "linux"} }

func (l *Loader) activeProfiles(p *gopom.Project) []*gopom.Profile {
	if p.Profiles == nil {
		return nil
	}
	var out []*gopom.Profile
	for i := range *p.Profiles {
		pr := &(*p.Profiles)[i]
		if pr.Activation == nil {
			continue
		}
		if pr.Activation.ActiveByDefault != nil && *pr.Activation.ActiveByDefault {
			out = append(out, pr)
		}
	}
	return out
}

func ownProperties(p *gopom.Project, active []*gopom.Profile) [][2]string {
	var out [][2]string
	add := func(pp *gopom.Properties) {
		if pp == nil {
			return
		}
		keys := make([]string, 0, len(pp.Entries))
		for k := range pp.Entries {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			out = append(out, [2]string{k, strings.TrimSpace(pp.Entries[k])})
		}
	}
	add(p.Properties)
	for _, pr := range active {
		add(pr.Properties)
	}
	return out
}

func ownManaged(p *gopom.Project, active []*gopom.Profile) []gopom.Dependency {
	var out []gopom.Dependency
	if p.DependencyManagement != nil && p.DependencyManagement.Dependencies != nil {
		out = append(out, *p.DependencyManagement.Dependencies...)
	}
	for _, pr := range active {
		if pr.DependencyManagement != nil && pr.DependencyManagement.Dependencies != nil {
			out = append(out, *pr.DependencyManagement.Dependencies...)
		}
	}
	return out
}

func ownDeps(p *gopom.Project, active []*gopom.Profile) []gopom.Dependency {
	var out []gopom.Dependency
	if p.Dependencies != nil {
		out = append(out, *p.Dependencies...)
	}
	for _, pr := range active {
		if pr.Dependencies != nil {
			out = append(out, *pr.Dependencies...)
		}
	}
	return out
}

func relocationOf(p *gopom.Project, _ []*gopom.Profile) *gopom.Relocation {
	if p.DistributionManagement == nil {
		return nil
	}
	return p.DistributionManagement.Relocation
}
