package svgchart

import (
	"fmt"
	"html"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Canvas accumulates the elements of one SVG image.
type Canvas struct {
	w, h  int
	label string
	b     strings.Builder
}

// New starts a canvas of w x h user units (also its CSS pixel size) whose
// accessible name is label.
func New(w, h int, label string) *Canvas {
	return &Canvas{w: w, h: h, label: label}
}

// Style is how a shape is drawn; empty fields are left to the page's CSS.
type Style struct {
	Class       string
	Fill        string
	Stroke      string
	StrokeWidth float64
	Opacity     float64
	// Dash is a stroke-dasharray ("3 2"): a dashed line.
	Dash string
}

func (s Style) attrs() string {
	var b strings.Builder
	attr(&b, "class", s.Class)
	attr(&b, "fill", s.Fill)
	attr(&b, "stroke", s.Stroke)
	if s.StrokeWidth > 0 {
		attr(&b, "stroke-width", num(s.StrokeWidth))
	}
	if s.Opacity > 0 {
		attr(&b, "fill-opacity", num(s.Opacity))
	}
	attr(&b, "stroke-dasharray", s.Dash)
	return b.String()
}

func attr(b *strings.Builder, name, value string) {
	if value == "" {
		return
	}
	fmt.Fprintf(b, " %s=\"%s\"", name, html.EscapeString(value))
}

// num writes a coordinate with at most two decimals and no trailing zeros.
func num(v float64) string {
	s := strings.TrimRight(strings.TrimRight(strconv.FormatFloat(v, 'f', 2, 64), "0"), ".")
	if s == "-0" {
		return "0"
	}
	return s
}

func (c *Canvas) close(title string, tag string) {
	if title == "" {
		c.b.WriteString("/>")
		return
	}
	fmt.Fprintf(&c.b, "><title>%s</title></%s>", html.EscapeString(title), tag)
}

// Rect draws a rectangle; title, if any, is its tooltip.
func (c *Canvas) Rect(x, y, w, h float64, s Style, title string) {
	fmt.Fprintf(&c.b, "<rect x=\"%s\" y=\"%s\" width=\"%s\" height=\"%s\"%s", num(x), num(y), num(max(w, 0)), num(max(h, 0)), s.attrs())
	c.close(title, "rect")
	c.b.WriteByte('\n')
}

// Line draws a line segment.
func (c *Canvas) Line(x1, y1, x2, y2 float64, s Style) {
	fmt.Fprintf(&c.b, "<line x1=\"%s\" y1=\"%s\" x2=\"%s\" y2=\"%s\"%s/>\n", num(x1), num(y1), num(x2), num(y2), s.attrs())
}

// Polyline draws connected segments through the points (x0, y0, x1, y1, ...);
// with a Fill it is a filled area (closed back to the first point).
func (c *Canvas) Polyline(points []float64, s Style) {
	parts := make([]string, 0, len(points)/2)
	for i := 0; i+1 < len(points); i += 2 {
		parts = append(parts, num(points[i])+","+num(points[i+1]))
	}
	fmt.Fprintf(&c.b, "<polyline points=\"%s\"%s/>\n", strings.Join(parts, " "), s.attrs())
}

// Circle draws a circle; title, if any, is its tooltip.
func (c *Canvas) Circle(cx, cy, r float64, s Style, title string) {
	fmt.Fprintf(&c.b, "<circle cx=\"%s\" cy=\"%s\" r=\"%s\"%s", num(cx), num(cy), num(r), s.attrs())
	c.close(title, "circle")
	c.b.WriteByte('\n')
}

// Anchors of Text.
const (
	AnchorStart  = "start"
	AnchorMiddle = "middle"
	AnchorEnd    = "end"
)

// TextStyle is how a label is drawn.
type TextStyle struct {
	Class  string
	Fill   string
	Anchor string // AnchorStart (default), AnchorMiddle or AnchorEnd
	// Size is the font size in px (default: the page's).
	Size float64
	// MaxChars truncates the label to that many characters with an
	// ellipsis, the full text in a <title> (0: never).
	MaxChars int
	Bold     bool
}

// Text draws a label whose baseline is centred vertically at y.
func (c *Canvas) Text(x, y float64, text string, s TextStyle) {
	shown, cut := Truncate(text, s.MaxChars)
	fmt.Fprintf(&c.b, "<text x=\"%s\" y=\"%s\" dominant-baseline=\"central\"", num(x), num(y))
	var b strings.Builder
	attr(&b, "class", s.Class)
	attr(&b, "fill", s.Fill)
	if s.Anchor != "" && s.Anchor != AnchorStart {
		attr(&b, "text-anchor", s.Anchor)
	}
	if s.Size > 0 {
		attr(&b, "font-size", num(s.Size))
	}
	if s.Bold {
		attr(&b, "font-weight", "600")
	}
	c.b.WriteString(b.String())
	c.b.WriteByte('>')
	if cut {
		fmt.Fprintf(&c.b, "<title>%s</title>", html.EscapeString(text))
	}
	fmt.Fprintf(&c.b, "%s</text>\n", html.EscapeString(shown))
}

// Link wraps what draw adds in a link to href, which must be a relative
// path or a #fragment (anything with a scheme or starting with // is
// dropped and draw's elements are added unlinked).
func (c *Canvas) Link(href string, draw func()) {
	if !RelativeURL(href) {
		draw()
		return
	}
	fmt.Fprintf(&c.b, "<a href=\"%s\">", html.EscapeString(href))
	draw()
	c.b.WriteString("</a>\n")
}

// RelativeURL says whether href is a #fragment or a relative path: no
// scheme, no host, no backslash.
func RelativeURL(href string) bool {
	if href == "" || strings.HasPrefix(href, "//") || strings.ContainsAny(href, "\\\x00\n\r\t ") {
		return false
	}
	if i := strings.IndexAny(href, ":/?#"); i >= 0 && href[i] == ':' {
		return false
	}
	return true
}

// Truncate cuts s to at most n characters, the last an ellipsis, and says
// whether it did; n <= 0 never cuts.
func Truncate(s string, n int) (string, bool) {
	if n <= 0 || utf8.RuneCountInString(s) <= n {
		return s, false
	}
	r := []rune(s)
	return string(r[:max(n-1, 0)]) + "…", true
}

// String is the finished <svg> element (with no xmlns: it is meant to be
// inlined in HTML).
func (c *Canvas) String() string {
	return fmt.Sprintf("<svg width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" role=\"img\" aria-label=\"%s\">\n%s</svg>",
		c.w, c.h, c.w, c.h, html.EscapeString(c.label), c.b.String())
}
