// Command median reads `go test -bench` output on stdin and prints the
// median of each benchmark's metrics across its runs.
package main

import (
	"bufio"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
)

func main() {
	values := map[string]map[string][]float64{}
	var order []string
	sc := bufio.NewScanner(os.Stdin)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 4 || !strings.HasPrefix(f[0], "Benchmark") {
			continue
		}
		name := f[0]
		if _, ok := values[name]; !ok {
			values[name] = map[string][]float64{}
			order = append(order, name)
		}
		for i := 2; i+1 < len(f); i += 2 {
			v, err := strconv.ParseFloat(f[i], 64)
			if err == nil {
				values[name][f[i+1]] = append(values[name][f[i+1]], v)
			}
		}
	}
	for _, name := range order {
		var parts []string
		units := make([]string, 0, len(values[name]))
		for u := range values[name] {
			units = append(units, u)
		}
		sort.Strings(units)
		for _, u := range units {
			parts = append(parts, fmt.Sprintf("%s=%s", u, fmtMedian(values[name][u], u)))
		}
		fmt.Printf("median %-40s %s (n=%d)\n", name, strings.Join(parts, " "), len(values[name]["ns/op"]))
	}
}

func fmtMedian(v []float64, unit string) string {
	sort.Float64s(v)
	m := v[len(v)/2]
	if unit == "ns/op" {
		return fmt.Sprintf("%.1fus", m/1000)
	}
	return strconv.FormatFloat(m, 'f', -1, 64)
}
