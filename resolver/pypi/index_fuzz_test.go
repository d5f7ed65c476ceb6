package pypi

import (
	"net/url"
	"strings"
	"testing"
)

// FuzzParsePage checks that a hostile page never panics the parser, and
// that every file it keeps has a bare name and an http(s) URL without
// userinfo.
func FuzzParsePage(f *testing.F) {
	for _, s := range []string{
		`<a href="../../files/x-1.0-py3-none-any.whl#sha256=ab" data-requires-python="&gt;=3">x</a>`,
		`<a href='https://u:p@h/x.whl'>x.whl</a><meta name="pypi:repository-version" content="1.0">`,
		`{"meta":{"api-version":"1.1"},"files":[{"filename":"x.whl","url":"https://u:p@h/x.whl","hashes":{"sha256":"AB"},"yanked":"r"}]}`,
		`{"meta":{"api-version":"1.1"},"files":[{"filename":"x.whl","url":"//h/x.whl","yanked":7,"size":-1}]}`,
		"<a href=\"\x00\">", "<a\thref=x.whl>", `{"files":null}`, "<a href=javascript:x>a.whl</a>",
	} {
		f.Add(s, true)
		f.Add(s, false)
	}
	page, _ := url.Parse("https://ix.example/simple/p/")
	f.Fuzz(func(t *testing.T, body string, json bool) {
		ct := "text/html"
		if json {
			ct = mediaJSON
		}
		p, err := parsePage("https://ix.example/simple/", page, ct, []byte(body))
		if err != nil {
			return
		}
		for _, file := range p.Files {
			u, err := url.Parse(file.URL)
			if err != nil || u.User != nil || (u.Scheme != "https" && u.Scheme != "http") {
				t.Fatalf("file URL %q", file.URL)
			}
			if file.Filename == "" || strings.ContainsAny(file.Filename, "/\\\x00") || file.Filename == ".." {
				t.Fatalf("file name %q", file.Filename)
			}
		}
	})
}
