package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/prebake/prebake/internal/testenv"
	"github.com/prebake/prebake/resolver"
)

// ivyVersion is -ivy: the Ivy the oracle runs and prebake follows ("" for
// each one's default).
var ivyVersion string

// ivyDistributions are, per Ivy version, the Spark distribution (under
// testenv.CacheDir()) whose jars/ivy-<version>.jar the oracle runs, as
// spark-submit does: a line that ships that Ivy (2.5.1: 3.4; 2.5.3: 3.5.9
// and 4.x), and for 2.6.0 the newest line's with Ivy 2.6.0's jar
// (hack/infra.d/62-spark-ivy.sh).
var ivyDistributions = map[string]string{
	resolver.Ivy251: "pyspark-3.4.4",
	resolver.Ivy253: "pyspark-4.3.0",
	resolver.Ivy260: "spark-4.3.0-ivy-2.6.0",
}

// ivyJar is the jar of Ivy version v for the oracle: "" (run-oracle.sh's
// default, Debian's 2.5.1) without -ivy; else the jar of the Spark
// distribution that ships v (ivyDistributions) when it is installed, else
// Debian's for 2.5.1 and the one Maven keeps in ~/.m2 for the others.
func ivyJar(v string) (string, error) {
	if v == "" {
		return "", nil
	}
	if !slices.Contains(resolver.KnownIvyVersions, v) {
		return "", fmt.Errorf("-ivy %q: prebake follows %s (or all)", v, strings.Join(resolver.KnownIvyVersions, ", "))
	}
	if d, ok := ivyDistributions[v]; ok {
		jar := filepath.Join(testenv.CacheDir(), d, "pyspark", "jars", "ivy-"+v+".jar")
		if _, err := os.Stat(jar); err == nil {
			return jar, nil
		}
	}
	if v == resolver.Ivy251 {
		return "", nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", err
	}
	jar := filepath.Join(home, ".m2", "repository", "org", "apache", "ivy", "ivy", v, "ivy-"+v+".jar")
	if _, err := os.Stat(jar); err != nil {
		return "", fmt.Errorf("the jar of Ivy %s, %s, is missing: mvn dependency:get -Dartifact=org.apache.ivy:ivy:%s", v, jar, v)
	}
	return jar, nil
}

// useIvy points the oracle (IVY_JAR, read by run-oracle.sh) and prebake
// (ivyVersion) at Ivy v.
func useIvy(v string) error {
	jar, err := ivyJar(v)
	if err != nil {
		return err
	}
	ivyVersion = v
	if jar == "" {
		return os.Unsetenv("IVY_JAR")
	}
	return os.Setenv("IVY_JAR", jar)
}

// runIvyVersions runs the cases of testdata/parity/ivyversions under every
// Ivy prebake knows: the oracle with that Ivy's jar against the golden
// NAME@VERSION.expected (rewritten with refresh) and against prebake
// following that Ivy.
func runIvyVersions(oracle, parity string, refresh bool) error {
	const dir = "ivyversions"
	cases, err := loadCasesIn(parity, dir)
	if err != nil {
		return err
	}
	if len(cases) == 0 {
		return errors.New("no cases in " + filepath.Join(parity, dir))
	}
	var failed []string
	for _, v := range resolver.KnownIvyVersions {
		if err := useIvy(v); err != nil {
			return err
		}
		cleanup, err := prepareOracle(oracle)
		if err != nil {
			return err
		}
		for _, c := range cases {
			out, err := runOracle(oracle, c)
			if err != nil {
				cleanup()
				return fmt.Errorf("%s@%s: %w", c.name, v, err)
			}
			golden := filepath.Join(parity, dir, c.name+"@"+v+".expected")
			if refresh {
				if err := os.WriteFile(golden, []byte(out), 0o644); err != nil {
					cleanup()
					return err
				}
				continue
			}
			want, _ := os.ReadFile(golden)
			if strings.TrimSpace(out) != strings.TrimSpace(string(want)) {
				failed = append(failed, fmt.Sprintf("%s@%s: the oracle differs from the golden:\n--- golden\n%s--- oracle\n%s", c.name, v, want, out))
			}
			if p := comparePrebake(c, out); p != "" {
				failed = append(failed, c.name+"@"+v+": "+p)
			}
		}
		cleanup()
	}
	if len(failed) > 0 {
		return fmt.Errorf("%d run(s) differ:\n%s", len(failed), strings.Join(failed, "\n"))
	}
	fmt.Printf("%d cases × %d Ivy versions: the oracle matches the goldens and prebake\n", len(cases), len(resolver.KnownIvyVersions))
	return nil
}

// runDiffIvys is -diff under each Ivy of versions in turn (-ivy all: every
// Ivy prebake follows), the oracle running the jar of the Spark
// distribution that ships it (ivyJar) and prebake following it.
func runDiffIvys(oracle, corpus string, versions []string, n int, seeds []int64, par int, report string) error {
	var errs []error
	for _, v := range versions {
		if err := useIvy(v); err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "parity: -diff under Ivy %s (oracle: %s)\n", v, os.Getenv("IVY_JAR"))
		cleanup, err := prepareOracle(oracle)
		if err != nil {
			return err
		}
		r := report
		if r != "" {
			r += "." + v
		}
		if err := runDiffSeeds(oracle, corpus, n, seeds, par, r); err != nil {
			errs = append(errs, fmt.Errorf("under Ivy %s: %w", v, err))
		}
		cleanup()
	}
	return errors.Join(errs...)
}
