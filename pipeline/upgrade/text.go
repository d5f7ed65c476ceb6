package upgrade

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// WriteText writes the report for a person.
func WriteText(w io.Writer, r *Report) error {
	var b strings.Builder
	fmt.Fprintf(&b, "Spark %s (Scala %s, Ivy %s) → Spark %s (Scala %s, Ivy %s)\n\n",
		r.From.Spark, r.From.Scala, r.From.Ivy, r.To.Spark, r.To.Scala, r.To.Ivy)
	if r.From.Image != "" {
		fmt.Fprintf(&b, "Current image: %s\n\n", r.From.Image)
	}
	b.WriteString("Coordinates:\n")
	tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
	for _, c := range r.Coordinates {
		to := c.To
		if to == "" {
			to = "(none)"
		}
		note := c.Change
		if c.Change == NoTargetBuild {
			note = "NO BUILD FOR THE TARGET"
			if c.Newest != "" {
				note += "; newest with one: " + c.Newest
			}
		}
		fmt.Fprintf(tw, "  %s\t→ %s\t%s\n", c.From, to, note)
	}
	tw.Flush()
	fmt.Fprintf(&b, "\nJars: %d → %d (%d added, %d removed, %d upgraded, %d downgraded)\n",
		r.From.Jars, r.To.Jars, r.Summary.Added, r.Summary.Removed, r.Summary.Upgraded, r.Summary.Downgraded)
	for _, j := range r.Jars {
		switch j.Change {
		case "added":
			fmt.Fprintf(&b, "  + %s %s\n", j.Module, j.To)
		case "removed":
			fmt.Fprintf(&b, "  - %s %s\n", j.Module, j.From)
		default:
			fmt.Fprintf(&b, "  ~ %s %s → %s (%s)\n", j.Module, j.From, j.To, j.Change)
		}
		for _, p := range j.Why {
			fmt.Fprintf(&b, "      why: %s\n", strings.Join(p, " → "))
		}
	}
	if r.Base != nil {
		rep := r.Base.Report
		fmt.Fprintf(&b, "\nBase image %s: Spark %s, Scala %s, %d jars\n", r.Base.Image, orDash(rep.BaseSparkVersion), orDash(rep.BaseScalaBinary), rep.BaseJars)
		for _, c := range r.Base.Shadowed {
			fmt.Fprintf(&b, "  shadows   %s (the base has %s: %s)\n", c.Coord, c.BaseVersion, c.BasePath)
		}
		for _, c := range r.Base.Duplicate {
			fmt.Fprintf(&b, "  duplicate %s (the base has it: %s)\n", c.Coord, c.BasePath)
		}
		if len(r.Base.Shadowed)+len(r.Base.Duplicate) == 0 {
			b.WriteString("  no jar of the target set is in the base\n")
		}
	}
	if k := r.Kubernetes; k != nil {
		b.WriteString("\nKubernetes objects:\n")
		switch {
		case k.Skipped != "":
			fmt.Fprintf(&b, "  not compared: %s\n", k.Skipped)
		case len(k.Changes) == 0:
			b.WriteString("  the same on both lines\n")
		}
		for _, c := range k.Changes {
			fmt.Fprintf(&b, "  %s %s: %s → %s\n", c.Object, c.Path, orAbsent(c.From), orAbsent(c.To))
		}
	}
	if len(r.Problems) == 0 {
		b.WriteString("\nNothing breaks on the target line.\n")
	} else {
		fmt.Fprintf(&b, "\nProblems (%d):\n", len(r.Problems))
		for _, p := range r.Problems {
			fmt.Fprintf(&b, "  %s: %s\n", p.Kind, p.Message)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func orAbsent(s string) string {
	if s == "" {
		return "(absent)"
	}
	return s
}
