package e2e

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// docPages are the Markdown pages a reader follows: the README and every
// page under docs/ (the generated command reference included).
func docPages(t *testing.T, root string) []string {
	t.Helper()
	pages := []string{"README.md"}
	err := filepath.WalkDir(filepath.Join(root, "docs"), func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(p, ".md") {
			rel, err := filepath.Rel(root, p)
			if err != nil {
				return err
			}
			pages = append(pages, rel)
		}
		return nil
	})
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return pages
}

var (
	headingRE = regexp.MustCompile(`^#{1,6} (.*)$`)
	linkRE    = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	slugDrop  = regexp.MustCompile(`[^\p{L}\p{N}_\- ]`)
)

// anchors are the GitHub anchors of a page's headings (outside code
// blocks): lower case, punctuation dropped, spaces as dashes, -1, -2 for
// repeats.
func anchors(text string) map[string]bool {
	out, seen, code := map[string]bool{}, map[string]int{}, false
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(l, "```") {
			code = !code
		}
		m := headingRE.FindStringSubmatch(l)
		if m == nil || code {
			continue
		}
		s := strings.ReplaceAll(slugDrop.ReplaceAllString(strings.ToLower(strings.TrimSpace(m[1])), ""), " ", "-")
		a := s
		if n := seen[s]; n > 0 {
			a = s + "-" + strconv.Itoa(n)
		}
		seen[s]++
		out[a] = true
	}
	return out
}

// TestDocsLinks follows every relative link of the README and docs/: the
// file must exist in the checkout and an anchor must name a heading of
// its page. A section moved or renamed without its links fails here.
func TestDocsLinks(t *testing.T) {
	root := repoRoot(t)
	texts := map[string]string{}
	read := func(rel string) (string, bool) {
		if s, ok := texts[rel]; ok {
			return s, true
		}
		b, err := os.ReadFile(filepath.Join(root, rel))
		if err != nil {
			return "", false
		}
		texts[rel] = string(b)
		return string(b), true
	}
	for _, page := range docPages(t, root) {
		text, _ := read(page)
		code := false
		for n, l := range strings.Split(text, "\n") {
			if strings.HasPrefix(strings.TrimSpace(l), "```") {
				code = !code
			}
			if code {
				continue
			}
			for _, m := range linkRE.FindAllStringSubmatch(l, -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				path, anchor, _ := strings.Cut(target, "#")
				dest := page
				if path != "" {
					dest = filepath.ToSlash(filepath.Clean(filepath.Join(filepath.Dir(page), path)))
					if strings.HasPrefix(dest, "../") {
						t.Errorf("%s:%d: link %s leaves the repository", page, n+1, target)
						continue
					}
					if _, err := os.Stat(filepath.Join(root, dest)); err != nil {
						t.Errorf("%s:%d: link %s: %s does not exist", page, n+1, target, dest)
						continue
					}
				}
				if anchor == "" || !strings.HasSuffix(dest, ".md") {
					continue
				}
				s, _ := read(dest)
				if !anchors(s)[anchor] {
					t.Errorf("%s:%d: link %s: %s has no heading #%s", page, n+1, target, dest, anchor)
				}
			}
		}
	}
}

// TestBlockPages: a page with a marked block is one the newcomer test
// follows (BlockPages), so that no block is silently left out.
func TestBlockPages(t *testing.T) {
	root := repoRoot(t)
	follow := map[string]bool{}
	for _, p := range BlockPages {
		follow[p] = true
	}
	for _, page := range docPages(t, root) {
		text, err := os.ReadFile(filepath.Join(root, page))
		if err != nil {
			t.Fatal(err)
		}
		blocks, err := ReadmeBlocks(text)
		if err != nil {
			t.Errorf("%s: %v", page, err)
			continue
		}
		if len(blocks) > 0 && !follow[page] {
			t.Errorf("%s has %d marked blocks but is not in BlockPages", page, len(blocks))
		}
	}
}
