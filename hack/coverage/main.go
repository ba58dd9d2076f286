// Command coverage prints statement coverage per package from a Go cover profile, and
// with -min fails when a package is under that percentage: `go tool cover -func` reports
// per function, and the build gate is per package (make test, COVERAGE_MIN).
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"path"
	"slices"
	"strconv"
	"strings"
)

func main() {
	minPercent := flag.Float64("min", 0, "fail when a package's statement coverage is under this percentage")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: coverage [-min percent] <cover.out>")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() != 1 {
		flag.Usage()
		os.Exit(2)
	}
	f, err := os.Open(flag.Arg(0))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer f.Close()
	pkgs, err := perPackage(f)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if len(pkgs) == 0 {
		fmt.Fprintln(os.Stderr, "coverage: the profile holds no statement")
		os.Exit(1)
	}
	if below := report(os.Stdout, pkgs, *minPercent); len(below) > 0 {
		fmt.Fprintf(os.Stderr, "coverage: %d package(s) under %.0f%%: %s\n", len(below), *minPercent, strings.Join(below, ", "))
		os.Exit(1)
	}
}

// counts is a package's statements: covered and in all.
type counts struct{ covered, total int }

func (c counts) percent() float64 { return 100 * float64(c.covered) / float64(max(c.total, 1)) }

// perPackage reads a cover profile. A block appears once per test binary in a -coverpkg
// profile: it is counted once, covered if any binary covered it.
func perPackage(r io.Reader) (map[string]counts, error) {
	blocks := map[string]bool{}
	statements := map[string]int{}
	scanner := bufio.NewScanner(r)
	for scanner.Scan() {
		line := scanner.Text()
		if strings.HasPrefix(line, "mode:") {
			continue
		}
		fields := strings.Fields(line) // file:start,end statements count
		if len(fields) != 3 {
			continue
		}
		n, _ := strconv.Atoi(fields[1])
		hits, _ := strconv.Atoi(fields[2])
		blocks[fields[0]] = blocks[fields[0]] || hits > 0
		statements[fields[0]] = n
	}
	if err := scanner.Err(); err != nil {
		return nil, fmt.Errorf("read cover profile: %w", err)
	}
	out := map[string]counts{}
	for block, covered := range blocks {
		pkg := path.Dir(block[:strings.LastIndex(block, ":")])
		c := out[pkg]
		c.total += statements[block]
		if covered {
			c.covered += statements[block]
		}
		out[pkg] = c
	}
	return out, nil
}

// report prints one line per package, and the total, and returns the packages under
// minPercent.
func report(w io.Writer, pkgs map[string]counts, minPercent float64) (below []string) {
	var all counts
	for _, name := range slices.Sorted(maps.Keys(pkgs)) {
		c := pkgs[name]
		all.covered += c.covered
		all.total += c.total
		mark := ""
		if c.percent() < minPercent {
			mark = fmt.Sprintf("  < %.0f%%", minPercent)
			below = append(below, name)
		}
		fmt.Fprintf(w, "%-70s %5.1f%%%s\n", name, c.percent(), mark)
	}
	fmt.Fprintf(w, "%-70s %5.1f%%\n", "total", all.percent())
	return below
}
