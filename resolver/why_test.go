package resolver

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/prebake/prebake/errdefs"

	"github.com/google/go-cmp/cmp"
)

func node(gav string, children ...*Node) *Node {
	p := strings.Split(gav, ":")
	return &Node{Group: p[0], Artifact: p[1], Version: p[2], Children: children}
}

func evictedNode(gav, by string) *Node {
	n := node(gav)
	n.Evicted, n.By = true, by
	return n
}

// demoGraph is the graph of testdata/demo-repo for
// logback-classic:1.4.11 + slf4j-api:1.7.36.
func demoGraph() *Graph {
	return &Graph{
		Roots: []*Node{
			node("ch.qos.logback:logback-classic:1.4.11",
				node("ch.qos.logback:logback-core:1.4.11"),
				node("org.slf4j:slf4j-api:2.0.7")),
			evictedNode("org.slf4j:slf4j-api:1.7.36", "2.0.7"),
		},
		Evicted: []Eviction{{Group: "org.slf4j", Artifact: "slf4j-api", Version: "1.7.36", By: "2.0.7"}},
	}
}

func TestWhy(t *testing.T) {
	// diamond: a → b → d, a → c → d (d expanded once, under b), d → e;
	// c's d is an unexpanded occurrence, so the path a→c→d→e must come from
	// the folded graph. x:1.0 (under c) loses to x:2.0 (under e).
	diamond := &Graph{
		Roots: []*Node{
			node("g:a:1",
				node("g:b:1", node("g:d:1", node("g:e:1", node("g:x:2.0")))),
				node("g:c:1", node("g:d:1"), evictedNode("g:x:1.0", "2.0"))),
		},
		Evicted: []Eviction{{Group: "g", Artifact: "x", Version: "1.0", By: "2.0"}},
	}
	// cycle: p → q → p (Ivy tolerates cycles in POMs).
	q := node("c:q:1")
	p := node("c:p:1", q)
	q.Children = []*Node{node("c:p:1")}
	cycle := &Graph{Roots: []*Node{p}}

	tests := []struct {
		name    string
		g       *Graph
		pattern string
		want    []ModuleWhy
	}{
		{"demo slf4j-api", demoGraph(), "org.slf4j:slf4j-api", []ModuleWhy{{
			Group: "org.slf4j", Artifact: "slf4j-api", Chosen: []string{"2.0.7"},
			Paths: []WhyPath{
				{Nodes: []string{"ch.qos.logback:logback-classic:1.4.11", "org.slf4j:slf4j-api:2.0.7"}},
				{Nodes: []string{"org.slf4j:slf4j-api:1.7.36"}, Evicted: true, By: "2.0.7"},
			},
			Evicted: []Eviction{{Group: "org.slf4j", Artifact: "slf4j-api", Version: "1.7.36", By: "2.0.7"}},
		}}},
		{"demo logback-classic evicts through its dependency", demoGraph(), "ch.qos.logback:logback-classic", []ModuleWhy{{
			Group: "ch.qos.logback", Artifact: "logback-classic", Chosen: []string{"1.4.11"},
			Paths:  []WhyPath{{Nodes: []string{"ch.qos.logback:logback-classic:1.4.11"}}},
			Evicts: []CausedEviction{{Via: "ch.qos.logback:logback-classic:1.4.11", Winner: "org.slf4j:slf4j-api:2.0.7", Evicted: "org.slf4j:slf4j-api:1.7.36"}},
		}}},
		{"glob over artifacts, sorted", demoGraph(), "ch.qos.logback:logback-c*", []ModuleWhy{
			{
				Group: "ch.qos.logback", Artifact: "logback-classic", Chosen: []string{"1.4.11"},
				Paths:  []WhyPath{{Nodes: []string{"ch.qos.logback:logback-classic:1.4.11"}}},
				Evicts: []CausedEviction{{Via: "ch.qos.logback:logback-classic:1.4.11", Winner: "org.slf4j:slf4j-api:2.0.7", Evicted: "org.slf4j:slf4j-api:1.7.36"}},
			},
			{
				Group: "ch.qos.logback", Artifact: "logback-core", Chosen: []string{"1.4.11"},
				Paths: []WhyPath{{Nodes: []string{"ch.qos.logback:logback-classic:1.4.11", "ch.qos.logback:logback-core:1.4.11"}}},
			},
		}},
		{"glob over groups", demoGraph(), "org.*:*", []ModuleWhy{{
			Group: "org.slf4j", Artifact: "slf4j-api", Chosen: []string{"2.0.7"},
			Paths: []WhyPath{
				{Nodes: []string{"ch.qos.logback:logback-classic:1.4.11", "org.slf4j:slf4j-api:2.0.7"}},
				{Nodes: []string{"org.slf4j:slf4j-api:1.7.36"}, Evicted: true, By: "2.0.7"},
			},
			Evicted: []Eviction{{Group: "org.slf4j", Artifact: "slf4j-api", Version: "1.7.36", By: "2.0.7"}},
		}}},
		{"every path through an unexpanded occurrence", diamond, "g:e", []ModuleWhy{{
			Group: "g", Artifact: "e", Chosen: []string{"1"},
			Paths: []WhyPath{
				{Nodes: []string{"g:a:1", "g:b:1", "g:d:1", "g:e:1"}},
				{Nodes: []string{"g:a:1", "g:c:1", "g:d:1", "g:e:1"}},
			},
			Evicts: []CausedEviction{{Via: "g:e:1", Winner: "g:x:2.0", Evicted: "g:x:1.0"}},
		}}},
		{"winner and loser paths", diamond, "g:x", []ModuleWhy{{
			Group: "g", Artifact: "x", Chosen: []string{"2.0"},
			Paths: []WhyPath{
				{Nodes: []string{"g:a:1", "g:b:1", "g:d:1", "g:e:1", "g:x:2.0"}},
				{Nodes: []string{"g:a:1", "g:c:1", "g:d:1", "g:e:1", "g:x:2.0"}},
				{Nodes: []string{"g:a:1", "g:c:1", "g:x:1.0"}, Evicted: true, By: "2.0"},
			},
			Evicted: []Eviction{{Group: "g", Artifact: "x", Version: "1.0", By: "2.0"}},
		}}},
		{"cycle", cycle, "c:p", []ModuleWhy{{
			Group: "c", Artifact: "p", Chosen: []string{"1"},
			Paths: []WhyPath{{Nodes: []string{"c:p:1"}}},
		}}},
		{"evicted only", &Graph{Evicted: []Eviction{{Group: "o", Artifact: "gone", Version: "1"}}}, "o:gone", []ModuleWhy{{
			Group: "o", Artifact: "gone",
			Evicted: []Eviction{{Group: "o", Artifact: "gone", Version: "1"}},
		}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Why(tt.g, tt.pattern)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("Why(%q) (-want +got):\n%s", tt.pattern, d)
			}
		})
	}
}

func TestWhyErrors(t *testing.T) {
	tests := []struct {
		pattern string
		code    errdefs.Kind
		notFnd  bool
	}{
		{"org.slf4j:slf4j-simple", errdefs.NotFound, true},
		{"com.*:*", errdefs.NotFound, true},
		{"org.slf4j", errdefs.BadArgument, false},
		{"org.slf4j:slf4j-api:2.0.7", errdefs.BadArgument, false},
		{":slf4j-api", errdefs.BadArgument, false},
		{"org.slf4j:[abc", errdefs.BadArgument, false},
	}
	for _, tt := range tests {
		t.Run(tt.pattern, func(t *testing.T) {
			_, err := Why(demoGraph(), tt.pattern)
			if err == nil {
				t.Fatal("no error")
			}
			if errdefs.KindOf(err) != tt.code || errors.Is(err, ErrNotFound) != tt.notFnd || !strings.Contains(err.Error(), tt.pattern) {
				t.Errorf("error %q: code %d, want %d; ErrNotFound %v, want %v; must name %q",
					err, errdefs.KindOf(err), tt.code, errors.Is(err, ErrNotFound), tt.notFnd, tt.pattern)
			}
		})
	}
}

// TestWhyTruncated: 2^11 paths through eleven diamonds stop at MaxWhyPaths.
func TestWhyTruncated(t *testing.T) {
	bottom := node("t:end:1")
	next := bottom
	for i := 10; i >= 0; i-- {
		join := node(fmt.Sprintf("t:join%d:1", i), next)
		next = node(fmt.Sprintf("t:split%d:1", i),
			node(fmt.Sprintf("t:l%d:1", i), join),
			node(fmt.Sprintf("t:r%d:1", i), node(join.Group+":"+join.Artifact+":"+join.Version)))
	}
	got, err := Why(&Graph{Roots: []*Node{next}}, "t:end")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || len(got[0].Paths) != MaxWhyPaths || !got[0].Truncated {
		t.Fatalf("got %d module(s), %d paths, truncated %v; want 1, %d, true", len(got), len(got[0].Paths), got[0].Truncated, MaxWhyPaths)
	}
	if n := len(got[0].Paths[0].Nodes); n != 3*11+1 {
		t.Errorf("first path has %d nodes, want %d", n, 3*11+1)
	}
}
