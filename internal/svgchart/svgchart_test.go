package svgchart

import (
	"slices"
	"strings"
	"testing"
)

func TestNiceTicks(t *testing.T) {
	tests := []struct {
		lo, hi float64
		n      int
		want   []float64
	}{
		{0, 1, 5, []float64{0, 0.2, 0.4, 0.6, 0.8, 1}},
		{0, 97, 5, []float64{0, 20, 40, 60, 80, 100}},
		{3, 3, 4, []float64{1, 2, 3, 4, 5}},
		{0, 0, 4, []float64{0, 0.5, 1}},
		{0.013, 0.061, 4, []float64{0, 0.02, 0.04, 0.06, 0.08}},
	}
	for _, tt := range tests {
		if got := NiceTicks(tt.lo, tt.hi, tt.n); !slices.Equal(got, tt.want) {
			t.Errorf("NiceTicks(%v, %v, %d) = %v; want %v", tt.lo, tt.hi, tt.n, got, tt.want)
		}
	}
}

func TestScales(t *testing.T) {
	s := Linear{D0: 0, D1: 10, R0: 100, R1: 200}
	if s.Map(5) != 150 || s.Map(0) != 100 {
		t.Errorf("Linear.Map: %v %v", s.Map(5), s.Map(0))
	}
	if (Linear{D0: 1, D1: 1, R0: 7}).Map(3) != 7 {
		t.Error("degenerate domain")
	}
	b := Band{N: 4, R0: 0, R1: 100, Pad: 0.2}
	if b.Step() != 25 || b.Start(1) != 27.5 || b.Width() != 20 || b.Centre(0) != 12.5 {
		t.Errorf("Band: %v %v %v %v", b.Step(), b.Start(1), b.Width(), b.Centre(0))
	}
}

func TestSequential(t *testing.T) {
	s := Sequential{Lo: RGB{0, 0, 0}, Mid: RGB{100, 100, 100}, Hi: RGB{255, 255, 255}}
	tests := []struct {
		t    float64
		want string
	}{{0, "#000000"}, {0.25, "#323232"}, {0.5, "#646464"}, {1, "#ffffff"}, {2, "#ffffff"}, {-1, "#000000"}}
	for _, tt := range tests {
		if got := s.At(tt.t).Hex(); got != tt.want {
			t.Errorf("At(%v) = %s; want %s", tt.t, got, tt.want)
		}
	}
	if (RGB{255, 255, 255}).Luminance() < 0.99 || (RGB{}).Luminance() != 0 {
		t.Error("Luminance")
	}
}

func TestTruncate(t *testing.T) {
	tests := []struct {
		s    string
		n    int
		want string
		cut  bool
	}{
		{"short", 10, "short", false},
		{"a-very-long-task-name", 8, "a-very-…", true},
		{"ünïcödé", 4, "ünï…", true},
		{"x", 0, "x", false},
	}
	for _, tt := range tests {
		got, cut := Truncate(tt.s, tt.n)
		if got != tt.want || cut != tt.cut {
			t.Errorf("Truncate(%q, %d) = %q, %v", tt.s, tt.n, got, cut)
		}
	}
}

func TestRelativeURL(t *testing.T) {
	for href, want := range map[string]bool{
		"../trials/t1/a/r01/": true, "#leaderboard": true, "a:b/c": false, "javascript:alert(1)": false,
		"https://example.com/": false, "//example.com/x": false, "": false, "x/y?z=a:b": true, `a\b`: false,
	} {
		if got := RelativeURL(href); got != want {
			t.Errorf("RelativeURL(%q) = %v", href, got)
		}
	}
}

func TestCanvasEscapes(t *testing.T) {
	c := New(100, 50, `chart "<x>"`)
	c.Text(1, 2, `<script>alert("x")</script>`, TextStyle{MaxChars: 40})
	c.Rect(0, 0, 10, -5, Style{Fill: "#fff"}, `a&b`)
	c.Link("javascript:alert(1)", func() { c.Circle(1.005, 2.5, 3, Style{}, "") })
	c.Link("../t/", func() { c.Line(0, 0, 1, 1, Style{Class: "axis"}) })
	got := c.String()
	for _, bad := range []string{"<script>", "javascript:", `"<x>"`} {
		if strings.Contains(got, bad) {
			t.Errorf("unescaped %q in\n%s", bad, got)
		}
	}
	for _, want := range []string{`height="0"`, "<title>a&amp;b</title>", `<a href="../t/">`, `cx="1"`, `aria-label="chart &#34;&lt;x&gt;&#34;"`} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in\n%s", want, got)
		}
	}
}

func TestDashedAndFilledLines(t *testing.T) {
	c := New(10, 10, "x")
	c.Line(0, 0, 5, 5, Style{Stroke: "#000", Dash: "3 2"})
	c.Polyline([]float64{0, 10, 5, 2, 10, 10}, Style{Fill: "#abc"})
	got := c.String()
	for _, want := range []string{`stroke-dasharray="3 2"`, `<polyline points="0,10 5,2 10,10" fill="#abc"/>`} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %s in\n%s", want, got)
		}
	}
}
