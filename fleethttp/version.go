package fleethttp

import (
	"runtime/debug"
	"strings"
)

// VersionHeader names the response header, on every response, that names
// the build of the server that answered: a bug report quotes it.
const VersionHeader = "Fleet-Version"

// modulePath is the module this package belongs to.
const modulePath = "github.com/fleetkit/fleetapi"

// WithVersion sets what the Fleet-Version header says: the server's build,
// as its operator names it (fleetserver uses what `fleetserver --version`
// prints). Characters a header value cannot hold become "?"; an empty v
// keeps the default, ModuleVersion.
func WithVersion(v string) Option {
	return func(h *Handler) {
		if v = headerSafe(v); v != "" {
			h.version = v
		}
	}
}

// ModuleVersion is the version of this module in the running program, from
// its build information: the module's tag (v0.N.M, or a pseudo-version)
// when a program imports it, "(devel)" when the program is built from a
// checkout of the module itself, followed by the commit when the build
// recorded it.
func ModuleVersion() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "(unknown)"
	}
	return moduleVersion(bi)
}

func moduleVersion(bi *debug.BuildInfo) string {
	if bi.Main.Path != modulePath {
		for _, d := range bi.Deps {
			if d.Path == modulePath {
				if d.Replace != nil && d.Replace.Version != "" {
					return d.Replace.Version
				}
				return d.Version
			}
		}
	}
	v := bi.Main.Version
	if v == "" {
		v = "(devel)"
	}
	for _, s := range bi.Settings {
		if s.Key == "vcs.revision" && s.Value != "" {
			rev := s.Value
			if len(rev) > 12 {
				rev = rev[:12]
			}
			v += " (commit " + rev + ")"
		}
	}
	return v
}

// headerSafe returns v trimmed, with anything but visible ASCII and spaces
// replaced, so that it is a valid header value.
func headerSafe(v string) string {
	v = strings.TrimSpace(v)
	return strings.Map(func(r rune) rune {
		if r < ' ' || r > '~' {
			return '?'
		}
		return r
	}, v)
}
