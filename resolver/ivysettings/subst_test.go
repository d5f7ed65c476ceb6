package ivysettings

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/prebake/prebake/internal/javaprops"
)

// FuzzIvySubst: the memoized expansion agrees with Ivy's recursive one
// (naiveSubst) for any variables and value, whenever the latter ends
// within the budget.
func FuzzIvySubst(f *testing.F) {
	f.Add("a=A\nb=${a}${a}\nc=${b}${b}${x}\n", "${c}-${a${a}}")
	f.Add("c1=${c2}\nc2=${c1}\n", "${c1}")
	f.Add("p2=${p1}${p1}${p1}\np1=${p0}${p0}\np0=z\n", "${p2}${p2}")
	f.Add("ivy.settings.dir=/g\n", "${ivy.settings.dir}")
	f.Fuzz(func(t *testing.T, props, v string) {
		entries, err := javaprops.Parse([]byte(props))
		if err != nil {
			return
		}
		vars := map[string]string{}
		for _, kv := range entries {
			vars[kv.Key] = kv.Value
		}
		local := map[string]string{"ivy.settings.dir": "/local"}
		s := &parser{Settings: &Settings{Path: "/x/ivysettings.xml"}, vars: vars, ctx: context.Background()}
		got, err := s.substLocal(local, v)
		if err != nil && strings.Contains(err.Error(), "in all") {
			return // over the budget: Ivy's would take as long
		}
		steps := MaxExpansionSteps
		want, werr := naiveSubst(s, local, v, &steps)
		if werr != nil && werr.Error() == "gave up" {
			if err != nil {
				return // both stopped, on different bounds
			}
			t.Fatalf("%q: Ivy's expansion passes the budget, the memoized one did not notice: %q, %v", v, got, err)
		}
		if (err != nil) != (werr != nil) || got != want {
			t.Fatalf("%q with %q: got %q, %v; Ivy's gives %q, %v", v, props, got, err, want, werr)
		}
	})
}

// naiveSubst is the expansion as Ivy writes it (and as prebake did before
// memoizing): each use re-expands, recursively. steps bounds its work; -1
// left means it gave up.
func naiveSubst(s *parser, local map[string]string, v string, steps *int) (string, error) {
	var stack []string
	var rec func(v string) (string, error)
	rec = func(v string) (string, error) {
		if !strings.Contains(v, "${") {
			return v, nil
		}
		if len(stack) > MaxVariableDepth {
			return "", errors.New("too deep")
		}
		var firstErr error
		out := naiveVarRE.ReplaceAllStringFunc(v, func(m string) string {
			if *steps--; *steps < 0 {
				firstErr = errors.New("gave up")
			}
			name := m[2 : len(m)-1]
			val, ok := s.lookup(local, name)
			if !ok || firstErr != nil {
				return m
			}
			for _, n := range stack {
				if n == name {
					firstErr = errors.New("cycle")
					return m
				}
			}
			stack = append(stack, name)
			r, err := rec(val)
			stack = stack[:len(stack)-1]
			if err != nil {
				firstErr = err
			}
			return r
		})
		if firstErr != nil {
			return "", firstErr
		}
		if len(out) > MaxVarExpansion {
			return "", errors.New("too long")
		}
		return out, nil
	}
	return rec(v)
}

var naiveVarRE = regexp.MustCompile(`\$\{([^}]+)\}`)

// TestIvySubstMatchesIvy: memoized expansion gives what Ivy's recursive
// one gives, value for value and error for error (undefined names kept,
// names with "${" inside, cycles, depth, include-local variables).
func TestIvySubstMatchesIvy(t *testing.T) {
	vars := map[string]string{
		"a": "A", "b": "${a}${a}-${undefined}", "c": "${b}/${b}/${a${a}}", "a${a": "weird",
		"cyc1": "x${cyc2}", "cyc2": "${cyc3}", "cyc3": "${cyc1}", "self": "${self}",
		"empty": "", "brace": "${", "close": "}", "glue": "${brace}a${close}",
		"ivy.settings.dir": "/global",
	}
	for i := 0; i <= 40; i++ {
		vars[fmt.Sprintf("d%d", i)] = fmt.Sprintf("${d%d}.", i+1)
	}
	vars["d41"] = "end"
	vars["shallow"] = "${d20}"
	vars["deep"] = "${d0}"
	local := map[string]string{"ivy.settings.dir": "/local"}
	for _, v := range []string{
		"", "plain", "${a}", "${b}", "${c}", "${undefined}", "${}", "${", "}", "${a", "$${a}}", "${a}}", "x${a${a}}y",
		"${cyc1}", "${self}", "ok ${a} then ${cyc2}", "${glue}", "${empty}${empty}", "${d30}", "${d0}", "${shallow}${deep}",
		"${d10}${d0}", "${ivy.settings.dir}", "${a}${b}${c}${a}${b}${c}",
	} {
		s := &parser{Settings: &Settings{Path: "/x/ivysettings.xml"}, vars: vars, ctx: context.Background()}
		got, err := s.substLocal(local, v)
		steps := 1 << 20
		want, werr := naiveSubst(s, local, v, &steps)
		if (err != nil) != (werr != nil) || got != want {
			t.Errorf("%q: got %q, %v; Ivy's gives %q, %v", v, got, err, want, werr)
		}
	}
}
