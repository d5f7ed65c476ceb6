package repo

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prebake/prebake/errdefs"
	"github.com/prebake/prebake/internal/m2test"

	"github.com/google/go-cmp/cmp"
)

// describe renders a chain: name, inputs entry, and "auth" when it has
// credentials.
func describe(chain []*entry) []string {
	var out []string
	for _, r := range chain {
		s := r.Name + " " + r.inputsEntry()
		if r.hasAuth {
			s += " auth=" + r.user
		}
		out = append(out, s)
	}
	return out
}

func ivsChain(t *testing.T, dir string, repos []string) ([]*entry, error) {
	t.Helper()
	return ivyChainFor(context.Background(), Config{IvySettings: filepath.Join(dir, "ivysettings.xml"), Repositories: repos, Home: "/home/u"}, defaultOptions(t))
}

func TestIvySettingsChain(t *testing.T) {
	t.Setenv("PREBAKE_IVS_TEST_ROOT", "https://env.example/maven/")
	tests := []struct {
		name  string
		files map[string]string
		repos []string
		want  []string
	}{{
		name: "ibiblio defaults and a chain",
		files: map[string]string{"ivysettings.xml": `<ivysettings><settings defaultResolver="main"/><resolvers>
			<chain name="main"><ibiblio name="central" m2compatible="true" useMavenMetadata="true" checkmodified="true"/><ibiblio name="corp" root="https://nexus.example/repo" m2compatible="true"/></chain>
			</resolvers></ivysettings>`},
		want: []string{"central https://repo1.maven.org/maven2/", "corp https://nexus.example/repo/"},
	}, {
		name: "--repositories on top: user-list = default + repo-N",
		files: map[string]string{"ivysettings.xml": `<ivysettings><settings defaultResolver="a"/><resolvers>
			<ibiblio name="a" root="https://a.example/" m2compatible="true"/></resolvers></ivysettings>`},
		repos: []string{"https://x.example/r,https://y.example/r"},
		want:  []string{"a https://a.example/", "repo-1 https://x.example/r/", "repo-2 https://y.example/r/"},
	}, {
		name:  "no default resolver: only --repositories",
		files: map[string]string{"ivysettings.xml": `<ivysettings><resolvers><ibiblio name="a" root="https://a.example/" m2compatible="true"/></resolvers></ivysettings>`},
		repos: []string{"https://x.example/r"},
		want:  []string{"repo-1 https://x.example/r/"},
	}, {
		name: "variables: property, properties file, include, environment, ivy.home",
		files: map[string]string{
			"ivysettings.xml": `<ivysettings>
				<property name="first" value="one"/>
				<property name="first" value="two" override="false"/>
				<properties file="vars.properties"/>
				<properties environment="env"/>
				<settings defaultResolver="${main.name}"/>
				<include file="sub/resolvers.xml"/>
				</ivysettings>`,
			"vars.properties": "# comment\nmain.name = main\nbase=https\\://props.example/\\\n  maven/\n",
			"sub/resolvers.xml": `<ivysettings><resolvers><chain name="main">
				<ibiblio name="p-${first}" root="${base}" m2compatible="true"/>
				<ibiblio name="e" root="${env.PREBAKE_IVS_TEST_ROOT}" m2compatible="true"/>
				<filesystem name="here" m2compatible="true">
				  <ivy pattern="${ivy.settings.dir}/repo/[organisation]/[module]/[revision]/[module]-[revision].pom"/>
				  <artifact pattern="${ivy.settings.dir}/repo/[organisation]/[module]/[revision]/[artifact]-[revision].[ext]"/>
				</filesystem>
				<filesystem name="home">
				  <ivy pattern="${ivy.home}/local/[organisation]/[module]/[revision]/[module]-[revision].pom"/>
				  <artifact pattern="${ivy.home}/local/[organisation]/[module]/[revision]/[artifact]-[revision].[ext]"/>
				</filesystem>
				</chain></resolvers></ivysettings>`,
		},
		want: []string{
			"p-one https://props.example/maven/",
			"e https://env.example/maven/",
			"here file:///@DIR@/sub/repo/ ivy=[organisation]/[module]/[revision]/[module]-[revision].pom artifact=[organisation]/[module]/[revision]/[artifact]-[revision].[ext] m2compatible",
			"home file:///home/u/.ivy2/local/ ivy=[organisation]/[module]/[revision]/[module]-[revision].pom artifact=[organisation]/[module]/[revision]/[artifact]-[revision].[ext]",
		},
	}, {
		name: "credentials by host, also for --repositories; refs; dual and returnFirst",
		files: map[string]string{"ivysettings.xml": `<ivysettings><settings defaultResolver="main"/>
			<credentials host="nexus.example" realm="Sonatype Nexus Repository Manager" username="deploy" passwd="s3cret"/>
			<resolvers>
			<url name="u"><ivy pattern="https://nexus.example/r/[module]/[revision]/[module]-[revision].pom"/><artifact pattern="https://nexus.example/r/[module]/[revision]/[artifact]-[revision](-[classifier]).[ext]"/></url>
			<ibiblio name="open" root="https://open.example/" m2compatible="true"/>
			<chain name="main" dual="true"><resolver ref="u"/><chain name="rf" returnFirst="true"><ibiblio ref="open"/></chain></chain>
			</resolvers></ivysettings>`},
		repos: []string{"https://nexus.example/extra"},
		want: []string{
			"u https://nexus.example/r/ ivy=[module]/[revision]/[module]-[revision].pom artifact=[module]/[revision]/[artifact]-[revision](-[classifier]).[ext] dual auth=deploy",
			"open https://open.example/ dual returnFirst",
			"repo-1 https://nexus.example/extra/ auth=deploy",
		},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := m2test.WriteFiles(t, tc.files)
			chain, err := ivsChain(t, dir, tc.repos)
			if err != nil {
				t.Fatal(err)
			}
			var want []string
			for _, w := range tc.want {
				want = append(want, strings.ReplaceAll(w, "/@DIR@", dir))
			}
			if d := cmp.Diff(want, describe(chain)); d != "" {
				t.Errorf("chain (-want +got):\n%s", d)
			}
		})
	}
}

func TestIvySettingsErrors(t *testing.T) {
	const ok = `<ibiblio name="a" root="https://a.example/" m2compatible="true"/>`
	doc := func(settings, resolvers string) map[string]string {
		return map[string]string{"ivysettings.xml": "<ivysettings>" + settings + "<resolvers>" + resolvers + "</resolvers></ivysettings>"}
	}
	tests := []struct {
		name  string
		files map[string]string
		code  errdefs.Kind
		want  string // in the message
	}{
		{"unsupported top-level element", doc(`<settings defaultResolver="a"/><modules><module organisation="x" resolver="a"/></modules>`, ok), errdefs.Invalid, "<modules>"},
		{"unsupported resolver", doc(`<settings defaultResolver="s"/>`, `<ssh name="s" host="h"/>`), errdefs.Invalid, "resolver type ssh"},
		{"unsupported attribute", doc(`<settings defaultResolver="a"/>`, `<ibiblio name="a" m2compatible="true" namespace="ns"/>`), errdefs.Invalid, "namespace"},
		{"maven 1 layout", doc(`<settings defaultResolver="a"/>`, `<ibiblio name="a" root="https://a.example/"/>`), errdefs.Invalid, "m2compatible"},
		{"no maven-metadata.xml", doc(`<settings defaultResolver="a"/>`, `<ibiblio name="a" m2compatible="true" useMavenMetadata="false"/>`), errdefs.Invalid, "useMavenMetadata"},
		{"usepoms false", doc(`<settings defaultResolver="a"/>`, `<ibiblio name="a" m2compatible="true" usepoms="false"/>`), errdefs.Invalid, "usepoms"},
		{"ivy.xml descriptors", doc(`<settings defaultResolver="u"/>`, `<url name="u"><ivy pattern="https://h.example/[organisation]/[module]/[revision]/ivy.xml"/><artifact pattern="https://h.example/[organisation]/[module]/[revision]/[artifact].[ext]"/></url>`), errdefs.Invalid, "ivy.xml"},
		{"unknown token", doc(`<settings defaultResolver="u"/>`, `<url name="u"><ivy pattern="https://h.example/[branch]/[module]-[revision].pom"/><artifact pattern="https://h.example/[module]-[revision].[ext]"/></url>`), errdefs.Invalid, "[branch]"},
		{"conflict manager", doc(`<settings defaultResolver="a" defaultConflictManager="all"/>`, ok), errdefs.Invalid, "defaultConflictManager"},
		{"unknown default resolver", doc(`<settings defaultResolver="nope"/>`, ok), errdefs.Invalid, `"nope"`},
		{"no resolver at all", doc(``, ok), errdefs.Invalid, "no defaultResolver"},
		{"ref before definition", doc(`<settings defaultResolver="c"/>`, `<chain name="c"><resolver ref="later"/></chain>`+ok), errdefs.Invalid, "unknown resolver later"},
		{"cyclic variables", map[string]string{"ivysettings.xml": `<ivysettings><property name="a" value="x"/><property name="b" value="\${a}"/><properties file="p.properties"/><settings defaultResolver="\${c}"/></ivysettings>`, "p.properties": "c=${d}\nd=${c}\n"}, errdefs.Invalid, "cyclic"},
		{"malformed XML", map[string]string{"ivysettings.xml": `<ivysettings><settings></ivysettings>`}, errdefs.Invalid, "malformed XML"},
		{"two credentials for one host", map[string]string{"ivysettings.xml": `<ivysettings><settings defaultResolver="a"/><credentials host="a.example" realm="r1" username="u1" passwd="TOPSECRET1"/><credentials host="a.example" realm="r2" username="u2" passwd="TOPSECRET2"/><resolvers>` + ok + `</resolvers></ivysettings>`}, errdefs.Invalid, "realm"},
		{"missing include", doc(`<include file="nope.xml"/>`, ok), errdefs.NotFound, "nope.xml"},
		{"include loop", map[string]string{"ivysettings.xml": `<ivysettings><include file="ivysettings.xml"/></ivysettings>`}, errdefs.Invalid, "included files"},
		{"expansion bomb", map[string]string{"ivysettings.xml": `<ivysettings><properties file="p.properties"/></ivysettings>`, "p.properties": bomb()}, errdefs.Invalid, "expands past"},
		{"include over http", doc(`<include url="https://h.example/ivysettings.xml"/>`, ok), errdefs.Invalid, "only local files"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := m2test.WriteFiles(t, tc.files)
			_, err := ivsChain(t, dir, nil)
			if err == nil {
				t.Fatal("no error")
			}
			if got := errdefs.KindOf(err); got != tc.code {
				t.Errorf("exit code %d, want %d: %v", got, tc.code, err)
			}
			msg := err.Error()
			if !strings.Contains(msg, tc.want) || !strings.Contains(msg, "ivysettings.xml") {
				t.Errorf("error %q does not name %q and the file", msg, tc.want)
			}
			if strings.Contains(msg, "TOPSECRET") {
				t.Errorf("a password is in the error: %s", msg)
			}
		})
	}
}

// bomb is a properties file whose last value doubles 40 times.
func bomb() string {
	var b strings.Builder
	b.WriteString("v0=xxxxxxxxxxxxxxxx\n")
	for i := 1; i <= 40; i++ {
		fmt.Fprintf(&b, "v%d=${v%d}${v%d}\n", i, i-1, i-1)
	}
	return b.String()
}

func TestIvySettingsFileSpec(t *testing.T) {
	dir := m2test.WriteFiles(t, map[string]string{"ivysettings.xml": `<ivysettings><settings defaultResolver="a"/><resolvers><ibiblio name="a" root="https://a.example/" m2compatible="true"/></resolvers></ivysettings>`})
	for _, tc := range []struct {
		spec string
		code errdefs.Kind
	}{
		{filepath.Join(dir, "ivysettings.xml"), 0},
		{"file://" + filepath.Join(dir, "ivysettings.xml"), 0},
		{"https://h.example/ivysettings.xml", errdefs.BadArgument},
		{"https://user:TOPSECRET@h.example/ivysettings.xml", errdefs.BadArgument},
		{filepath.Join(dir, "missing.xml"), errdefs.NotFound},
		{dir, errdefs.Invalid},
	} {
		_, err := ivyChainFor(context.Background(), Config{IvySettings: tc.spec, Home: "/home/u"}, defaultOptions(t))
		if got := errdefs.KindOf(err); (err == nil && tc.code != 0) || (err != nil && got != tc.code) {
			t.Errorf("%s: %v (code %d), want code %d", tc.spec, err, got, tc.code)
		}
		if err != nil && strings.Contains(err.Error(), "TOPSECRET") {
			t.Errorf("%s: the password is in the error: %v", tc.spec, err)
		}
	}
	if _, err := ivyChainFor(context.Background(), Config{IvySettings: filepath.Join(dir, "ivysettings.xml"), Settings: "settings.xml"}, defaultOptions(t)); errdefs.KindOf(err) != errdefs.BadArgument {
		t.Errorf("--settings with --ivy-settings: %v, want a usage error", err)
	}
}

func TestSubstPattern(t *testing.T) {
	tok := ivyTokens{org: "org.ex", module: "m", artifact: "m", revision: "1.0", ext: "jar", typ: "jar"}
	for _, tc := range []struct {
		p    string
		m2   bool
		want string
	}{
		{m2Pattern, true, "org/ex/m/1.0/m-1.0.jar"},
		{"[organisation]/[module]/[type]s/[artifact]-[revision](-[classifier]).[ext]", false, "org.ex/m/jars/m-1.0.jar"},
		{"[orgPath]/[module](/[classifier])/[revision]", false, "org/ex/m/1.0"},
	} {
		got, err := substPattern(tc.p, tok, tc.m2)
		if err != nil || got != tc.want {
			t.Errorf("%s: %q, %v; want %q", tc.p, got, err, tc.want)
		}
	}
	tok.classifier = "tests"
	if got, _ := substPattern(m2Pattern, tok, true); got != "org/ex/m/1.0/m-1.0-tests.jar" {
		t.Errorf("classifier: %q", got)
	}
}

func TestIvyHomeWarning(t *testing.T) {
	home := m2test.WriteFiles(t, map[string]string{"local/org/m/1.0/ivys/ivy.xml": "<ivy-module/>"})
	empty := t.TempDir()
	for _, tc := range []struct {
		req  Config
		warn bool
	}{
		{Config{IvyHome: home}, true},
		{Config{IvyHome: empty}, false},
		{Config{}, false},
		{Config{IvyHome: home, IvySettings: "s.xml"}, false}, // the settings' chain has no local-ivy-cache
		{Config{IvyHome: home, NoDefaultRepositories: true}, false},
	} {
		if got := IvyHomeWarning(tc.req) != ""; got != tc.warn {
			t.Errorf("%+v: warning %v, want %v", tc.req, got, tc.warn)
		}
	}
}
