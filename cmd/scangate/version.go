package main

import (
	"context"
	"fmt"
	"runtime"
	"runtime/debug"
)

// Set by make dist with -ldflags -X; a go install or go build leaves
// them empty and the build's own information (runtime/debug) is read.
var (
	version string
	commit  string
	date    string
)

// build is what a binary knows of its build.
type build struct {
	Version string `json:"version"`
	Commit  string `json:"commit"`
	Date    string `json:"date"` // the commit's time
	Go      string `json:"go"`
	OS      string `json:"os"`
	Arch    string `json:"arch"`
}

// buildInfo is the version, commit and date injected at link time, else
// those Go recorded in the binary: the module's version for go install
// module@version, the VCS revision and time for a build in a checkout.
func buildInfo() build {
	b := build{Version: version, Commit: commit, Date: date, Go: runtime.Version(), OS: runtime.GOOS, Arch: runtime.GOARCH}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return fill(b)
	}
	if b.Version == "" {
		b.Version = info.Main.Version
	}
	modified := false
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			if b.Commit == "" {
				b.Commit = s.Value
			}
		case "vcs.time":
			if b.Date == "" {
				b.Date = s.Value
			}
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	if modified && commit == "" {
		b.Commit += " (modified)"
	}
	return fill(b)
}

func fill(b build) build {
	if b.Version == "" {
		b.Version = "(devel)"
	}
	if b.Commit == "" {
		b.Commit = "unknown"
	}
	if b.Date == "" {
		b.Date = "unknown"
	}
	return b
}

func (a *app) version(_ context.Context, argv []string) error {
	fs := a.newFlags("version", "[--json]", "Prints the version, commit and commit date of this build.\n")
	asJSON := fs.Bool("json", false, "print it as JSON")
	if _, err := a.parse(fs, argv, 0); err != nil {
		return err
	}
	b := buildInfo()
	if *asJSON {
		return writeJSON(a.stdout, b)
	}
	_, err := fmt.Fprintf(a.stdout, "scangate %s\ncommit %s\ndate %s\nbuilt with %s for %s/%s\n", b.Version, b.Commit, b.Date, b.Go, b.OS, b.Arch)
	return err
}
