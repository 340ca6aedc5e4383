package main

import "runtime/debug"

func init() {
	if version == "" {
		version = moduleVersion(debug.ReadBuildInfo())
	}
}

// devVersion is the version of a binary built from a checkout without
// -ldflags "-X main.version=...".
const devVersion = "0.1.0-dev"

// moduleVersion returns the version of the main module recorded in the
// binary: the tag given to "go install .../cmd/mcptape@v1.2.3", or a
// pseudo-version when built with VCS information; devVersion when there
// is none ("(devel)").
func moduleVersion(info *debug.BuildInfo, ok bool) string {
	if !ok || info.Main.Version == "" || info.Main.Version == "(devel)" {
		return devVersion
	}
	return info.Main.Version
}
