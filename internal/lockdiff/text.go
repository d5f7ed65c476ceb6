package lockdiff

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// WriteJSON writes d as indented JSON (the schema documented on Diff).
func WriteJSON(w io.Writer, d *Diff) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(d)
}

// WriteText writes d for people: the two sides, why (the inputs that
// changed), any content changed under the same version in a loud block,
// one line per module change and a summary. The output is stable: modules
// are sorted and nothing depends on time or the environment.
//
// Module lines start with a marker: "+" added, "-" removed, "↑" upgrade,
// "↓" downgrade, "~" other version change, "!" content changed, "@"
// repository or file name changed only.
func WriteText(w io.Writer, d *Diff) error {
	b := bufio.NewWriter(w)
	fmt.Fprintf(b, "--- %s  lock %s  inputs %s\n", d.Old.Path, short(d.Old.LockHash), short(d.Old.InputsHash))
	fmt.Fprintf(b, "+++ %s  lock %s  inputs %s\n", d.New.Path, short(d.New.LockHash), short(d.New.InputsHash))
	fmt.Fprintf(b, "\nWhy: %s\n", d.Why)

	if d.InputsChanged {
		fmt.Fprintln(b, "\nInputs:")
		writeList(b, "packages", d.Inputs.Packages)
		writeList(b, "repositories", d.Inputs.Repositories)
		writeList(b, "excludes", d.Inputs.Excludes)
		if c := d.Inputs.Conflict; c != nil {
			fmt.Fprintf(b, "  conflict: %s → %s\n", c.Old, c.New)
		}
		if p := d.Inputs.Python; p != nil {
			writeList(b, "python requirements", p.Requirements)
			writeList(b, "python indexes", p.Indexes)
			writeList(b, "python platforms", p.Platforms)
			if v := p.Version; v != nil {
				fmt.Fprintf(b, "  python version: %s → %s\n", orNone(v.Old), orNone(v.New))
			}
		}
	}

	if red := d.ContentChanged(); len(red) > 0 {
		fmt.Fprintf(b, "\n!!! CONTENT CHANGED UNDER THE SAME VERSION (%d) — supply-chain red flag:\n", len(red))
		for _, m := range red {
			fmt.Fprintf(b, "!!!   %s %s\n", m.Module, m.NewVersion())
			fmt.Fprintf(b, "!!!     old sha256 %s  size %d  from %s\n", m.Old.Sha256, m.Old.Size, m.Old.Repository)
			fmt.Fprintf(b, "!!!     new sha256 %s  size %d  from %s\n", m.New.Sha256, m.New.Size, m.New.Repository)
		}
	}

	if len(d.Modules) > 0 {
		fmt.Fprintln(b, "\nModules:")
		width := 0
		for _, m := range d.Modules {
			width = max(width, len(m.Module))
		}
		for _, m := range d.Modules {
			fmt.Fprintf(b, "  %s %-*s  %s\n", marker(m), width, m.Module, describe(m))
		}
	}

	s := d.Summary
	fmt.Fprintf(b, "\nSummary: %d added, %d removed, %d upgraded, %d downgraded, %d other version changes, %d content changed, %d repository changed",
		s.Added, s.Removed, s.Upgraded, s.Downgraded, s.VersionChanged, s.ContentChanged, s.RepositoryChanged)
	if s.FileChanged > 0 {
		fmt.Fprintf(b, ", %d file name changed", s.FileChanged)
	}
	fmt.Fprintln(b)
	return b.Flush()
}

func writeList(w io.Writer, name string, l ListDiff) {
	if !l.Changed() {
		fmt.Fprintf(w, "  %s: unchanged\n", name)
		return
	}
	for _, x := range l.Added {
		fmt.Fprintf(w, "  %s: + %s\n", name, x)
	}
	for _, x := range l.Removed {
		fmt.Fprintf(w, "  %s: - %s\n", name, x)
	}
	if l.Reordered {
		fmt.Fprintf(w, "  %s: same entries, new order\n", name)
	}
}

func marker(m ModuleChange) string {
	switch {
	case m.Has(Added):
		return "+"
	case m.Has(Removed):
		return "-"
	case m.Has(Content):
		return "!"
	case m.Has(Upgrade):
		return "↑"
	case m.Has(Downgrade):
		return "↓"
	case m.Has(Version):
		return "~"
	}
	return "@"
}

func describe(m ModuleChange) string {
	var parts []string
	for _, k := range m.Changes {
		switch k {
		case Added:
			parts = append(parts, fmt.Sprintf("%s  added (from %s)", m.NewVersion(), m.New.Repository))
		case Removed:
			parts = append(parts, fmt.Sprintf("%s  removed", m.OldVersion()))
		case Upgrade, Downgrade:
			parts = append(parts, fmt.Sprintf("%s → %s  %s", m.OldVersion(), m.NewVersion(), k))
		case Version:
			parts = append(parts, fmt.Sprintf("%s → %s  version changed (equal in Ivy's order)", m.OldVersion(), m.NewVersion()))
		case Content:
			parts = append(parts, fmt.Sprintf("%s  CONTENT CHANGED (sha256 %s → %s)", m.NewVersion(), short(m.Old.Sha256), short(m.New.Sha256)))
		case Repository:
			parts = append(parts, fmt.Sprintf("repository %s → %s", m.Old.Repository, m.New.Repository))
		case File:
			parts = append(parts, fmt.Sprintf("file %s → %s", m.Old.File, m.New.File))
		}
	}
	s := strings.Join(parts, "; ")
	if !m.Has(Added) && !m.Has(Removed) && !m.Has(Upgrade) && !m.Has(Downgrade) && !m.Has(Version) && !m.Has(Content) {
		s = m.NewVersion() + "  " + s
	}
	return s
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

func short(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}
