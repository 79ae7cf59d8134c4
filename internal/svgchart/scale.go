package svgchart

import (
	"math"
	"strconv"
)

// Linear maps the domain [D0, D1] onto the range [R0, R1].
type Linear struct {
	D0, D1, R0, R1 float64
}

// Map returns v's position in the range; a degenerate domain maps to R0.
func (s Linear) Map(v float64) float64 {
	if s.D1 == s.D0 {
		return s.R0
	}
	return s.R0 + (v-s.D0)/(s.D1-s.D0)*(s.R1-s.R0)
}

// NiceTicks returns about n round tick values (steps of 1, 2 or 5 times a
// power of ten) covering [lo, hi], the first at or below lo and the last
// at or above hi.
func NiceTicks(lo, hi float64, n int) []float64 {
	if n < 1 {
		n = 1
	}
	if hi < lo {
		lo, hi = hi, lo
	}
	if hi == lo {
		if lo == 0 {
			hi = 1
		} else {
			lo, hi = lo-math.Abs(lo)/2, hi+math.Abs(hi)/2
		}
	}
	step := niceStep((hi - lo) / float64(n))
	start := math.Floor(lo/step) * step
	end := math.Ceil(hi/step) * step
	var ticks []float64
	for i := 0; ; i++ {
		v := start + float64(i)*step
		if v > end+step/2 {
			break
		}
		// Snap away the float error of the multiplication: round to the
		// step's decimals.
		d := math.Pow(10, math.Max(0, -math.Floor(math.Log10(step))))
		ticks = append(ticks, math.Round(v*d)/d)
	}
	return ticks
}

func niceStep(raw float64) float64 {
	p := math.Pow(10, math.Floor(math.Log10(raw)))
	switch f := raw / p; {
	case f <= 1:
		return p
	case f <= 2:
		return 2 * p
	case f <= 5:
		return 5 * p
	}
	return 10 * p
}

// FormatNumber writes v with at most 4 significant digits and no
// trailing zeros, for axis labels.
func FormatNumber(v float64) string {
	if v == 0 {
		return "0"
	}
	return strconv.FormatFloat(v, 'g', 4, 64)
}

// Band divides the range [R0, R1] into N equal bands, Pad (0 to 1) of
// each band left empty as the gap between neighbours.
type Band struct {
	N      int
	R0, R1 float64
	Pad    float64
}

// Step is the distance from one band's start to the next.
func (b Band) Step() float64 {
	if b.N <= 0 {
		return 0
	}
	return (b.R1 - b.R0) / float64(b.N)
}

// Start is where band i's drawn part starts.
func (b Band) Start(i int) float64 {
	return b.R0 + float64(i)*b.Step() + b.Step()*b.Pad/2
}

// Width is the drawn width of a band.
func (b Band) Width() float64 { return b.Step() * (1 - b.Pad) }

// Centre is the middle of band i.
func (b Band) Centre(i int) float64 { return b.Start(i) + b.Width()/2 }

// RGB is a colour.
type RGB struct{ R, G, B uint8 }

// Hex is the colour as #rrggbb.
func (c RGB) Hex() string {
	const digits = "0123456789abcdef"
	b := []byte{'#', 0, 0, 0, 0, 0, 0}
	for i, v := range []uint8{c.R, c.G, c.B} {
		b[1+2*i], b[2+2*i] = digits[v>>4], digits[v&15]
	}
	return string(b)
}

// Sequential is a colour scale from Lo (t = 0) through Mid (t = 0.5) to
// Hi (t = 1), interpolated linearly in RGB; t is clamped to [0, 1].
type Sequential struct {
	Lo, Mid, Hi RGB
}

// At is the colour at t.
func (s Sequential) At(t float64) RGB {
	t = math.Max(0, math.Min(1, t))
	a, b, u := s.Lo, s.Mid, t*2
	if t > 0.5 {
		a, b, u = s.Mid, s.Hi, (t-0.5)*2
	}
	mix := func(x, y uint8) uint8 { return uint8(math.Round(float64(x) + (float64(y)-float64(x))*u)) }
	return RGB{mix(a.R, b.R), mix(a.G, b.G), mix(a.B, b.B)}
}

// Luminance is the colour's relative luminance (0 black to 1 white), to
// choose dark or light text on it.
func (c RGB) Luminance() float64 {
	lin := func(v uint8) float64 {
		x := float64(v) / 255
		if x <= 0.04045 {
			return x / 12.92
		}
		return math.Pow((x+0.055)/1.055, 2.4)
	}
	return 0.2126*lin(c.R) + 0.7152*lin(c.G) + 0.0722*lin(c.B)
}
