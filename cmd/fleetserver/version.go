package main

import (
	"context"
	"fmt"
	"runtime/debug"
)

func versionCommand() command {
	return command{
		name:    "version",
		summary: "print the build's version (also --version)",
		about:   "Prints the version of this build: the module version, and the commit it was built from.",
		example: "fleetserver --version",
		define: func(c *cli, f *flags) func(context.Context, []string) error {
			return func(ctx context.Context, args []string) error {
				if err := noArgs("version", args); err != nil {
					return err
				}
				fmt.Fprintln(c.stdout, "fleetserver", buildVersion())
				return nil
			}
		},
	}
}

// buildVersion describes the build from its build information: the module
// version ("(devel)" when built from a checkout) and the commit, with its
// time and whether the tree had changes, then the Go version.
func buildVersion() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "(unknown)"
	}
	return describeBuild(bi)
}

func describeBuild(bi *debug.BuildInfo) string {
	v := bi.Main.Version
	if v == "" {
		v = "(devel)"
	}
	var rev, at, dirty string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.time":
			at = ", " + s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = ", modified"
			}
		}
	}
	if rev == "" {
		return v + " " + bi.GoVersion
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	return fmt.Sprintf("%s (commit %s%s%s) %s", v, rev, at, dirty, bi.GoVersion)
}
