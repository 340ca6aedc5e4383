package main

import (
	"testing"

	"github.com/mcptape/mcptape/analysis"
)

// TestSurfaceCounts: baseline's summary counts each kind with its noun
// agreeing ("1 tool", not "1 tools"), and names the kinds never listed.
func TestSurfaceCounts(t *testing.T) {
	one := []analysis.SurfaceItem{{Name: "a"}}
	two := []analysis.SurfaceItem{{Name: "a"}, {Name: "b"}}
	tests := []struct {
		s    analysis.Surface
		want string
	}{
		{analysis.Surface{Tools: one, Prompts: two, Listed: []string{analysis.KindTool, analysis.KindPrompt, analysis.KindResource, analysis.KindTemplate}},
			"1 tool, 2 prompts, 0 resources, 0 templates"},
		{analysis.Surface{Templates: one, Listed: []string{analysis.KindTemplate}},
			"1 template; never listed (unknown): tools, prompts, resources"},
		{analysis.Surface{}, "never listed (unknown): tools, prompts, resources, templates"},
	}
	for _, tt := range tests {
		if got := surfaceCounts(&tt.s); got != tt.want {
			t.Errorf("surfaceCounts(%+v) = %q, want %q", tt.s, got, tt.want)
		}
	}
}
