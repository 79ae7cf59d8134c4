// Package svgchart draws small charts as inline SVG text: linear and band
// scales, nice axis ticks, rectangles, lines, circles and text with
// <title> tooltips, links, and a sequential colour scale.
//
// It writes markup only; every string it is given is escaped, and a link
// must be a relative path or a #fragment. It must never load a font, a
// script or anything from a URL, nor measure text with a real font (label
// widths are estimated and long labels truncated, their full text in a
// <title>).
package svgchart
