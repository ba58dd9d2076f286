// Command coverage prints statement coverage per package from a Go cover profile:
// `go tool cover -func` reports per function, and the issue asks per package.
package main

import (
	"bufio"
	"fmt"
	"os"
	"path"
	"slices"
	"strconv"
	"strings"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: coverage <cover.out>")
		os.Exit(2)
	}
	f, err := os.Open(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer f.Close()
	type counts struct{ covered, total int }
	// A block appears once per test binary in a -coverpkg profile: count it once,
	// covered if any binary covered it.
	blocks := map[string]bool{}
	statements := map[string]int{}
	scanner := bufio.NewScanner(f)
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
	perPackage := map[string]*counts{}
	for block, covered := range blocks {
		pkg := path.Dir(block[:strings.LastIndex(block, ":")])
		c := perPackage[pkg]
		if c == nil {
			c = &counts{}
			perPackage[pkg] = c
		}
		c.total += statements[block]
		if covered {
			c.covered += statements[block]
		}
	}
	var names []string
	for name := range perPackage {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		c := perPackage[name]
		fmt.Printf("%-70s %5.1f%%\n", name, 100*float64(c.covered)/float64(max(c.total, 1)))
	}
}
