package repo

import (
	"archive/zip"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/prebake/prebake/resolver/mavensettings"
)

// MavenCentralURL returns the URL through which this machine reaches Maven
// Central, as Maven itself would, so that tests and tools never write a
// host name down (the Central parity suite points both Spark's
// $DEFAULT_ARTIFACT_REPOSITORY and prebake at it):
//
//  1. the mirror of "central" (an exact id, "*", "external:*", a list…) in
//     home's .m2/settings.xml, else in mavenHome's conf/settings.xml;
//  2. else the central repository of Maven's super POM
//     (org/apache/maven/model/pom-4.0.0.xml inside
//     mavenHome/lib/maven-model-builder-*.jar).
//
// home "" is the user's home; mavenHome "" is $MAVEN_HOME, else $M2_HOME,
// else the installation of the mvn found on PATH (symlinks followed). The
// URL ends with "/". An error names the files it read.
func MavenCentralURL(home, mavenHome string) (string, error) {
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	if mavenHome == "" {
		mavenHome = findMavenHome()
	}
	var settings []string
	if home != "" {
		settings = append(settings, filepath.Join(home, ".m2", "settings.xml"))
	}
	if mavenHome != "" {
		settings = append(settings, filepath.Join(mavenHome, "conf", "settings.xml"))
	}
	for _, p := range settings {
		if _, err := os.Stat(p); err != nil {
			continue
		}
		s, err := mavensettings.Load(p, home, os.LookupEnv)
		if err != nil {
			return "", err
		}
		if m := s.MirrorFor(RepoCentral, DefaultCentralURL); m != nil {
			return withSlash(m.URL), nil
		}
	}
	if mavenHome == "" {
		return "", errors.New("the URL of Maven Central: no mirror in " + strings.Join(settings, ", ") + " and no Maven installation (set MAVEN_HOME or put mvn on PATH) to read the super POM from")
	}
	jars, _ := filepath.Glob(filepath.Join(mavenHome, "lib", "maven-model-builder-*.jar"))
	if len(jars) == 0 {
		return "", fmt.Errorf("the URL of Maven Central: no mirror in %s and no maven-model-builder-*.jar in %s", strings.Join(settings, ", "), filepath.Join(mavenHome, "lib"))
	}
	u, err := superPOMCentral(jars[0])
	if err != nil {
		return "", fmt.Errorf("the URL of Maven Central: %s: %w", jars[0], err)
	}
	return withSlash(u), nil
}

func withSlash(u string) string {
	u = strings.TrimSpace(u)
	if !strings.HasSuffix(u, "/") {
		u += "/"
	}
	return u
}

// findMavenHome is $MAVEN_HOME, $M2_HOME, or the parent of the bin
// directory of the mvn on PATH, symlinks followed ("" when none).
func findMavenHome() string {
	for _, k := range []string{"MAVEN_HOME", "M2_HOME"} {
		if d := os.Getenv(k); d != "" {
			return d
		}
	}
	p, err := exec.LookPath("mvn")
	if err != nil {
		return ""
	}
	if r, err := filepath.EvalSymlinks(p); err == nil {
		p = r
	}
	return filepath.Dir(filepath.Dir(p))
}

// superPOMCentral reads the URL of the repository with id "central" from the
// super POM inside maven-model-builder's jar.
func superPOMCentral(jar string) (string, error) {
	z, err := zip.OpenReader(jar)
	if err != nil {
		return "", err
	}
	defer z.Close()
	const name = "org/apache/maven/model/pom-4.0.0.xml"
	for _, f := range z.File {
		if f.Name != name {
			continue
		}
		rc, err := f.Open()
		if err != nil {
			return "", err
		}
		defer rc.Close()
		data, err := io.ReadAll(io.LimitReader(rc, 1<<20))
		if err != nil {
			return "", err
		}
		var pom struct {
			Repos []struct {
				ID  string `xml:"id"`
				URL string `xml:"url"`
			} `xml:"repositories>repository"`
		}
		if err := xml.Unmarshal(data, &pom); err != nil {
			return "", fmt.Errorf("%s: %w", name, err)
		}
		for _, r := range pom.Repos {
			if strings.TrimSpace(r.ID) == RepoCentral && strings.TrimSpace(r.URL) != "" {
				return r.URL, nil
			}
		}
		return "", fmt.Errorf("%s: no repository with id central", name)
	}
	return "", fmt.Errorf("no %s", name)
}
