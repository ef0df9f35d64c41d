package sentrygrouping

import (
	"regexp"
	"slices"
	"strings"
)

// Sentry gives every JavaScript frame at a URL, a webpack: or an app: path
// a made-up module before grouping (src/sentry/lang/javascript/plugin.py,
// generate_modules; Symbolicator's crates/symbolicator-js/src/utils.rs,
// generate_module, for resolved frames). The module takes the file's
// place in grouping, so that the same code served from another host, at
// another version or under another content hash groups as one.

// jsModuleScheme are the paths a JavaScript frame gets a module for.
var jsModuleSchemes = [...]string{"http:", "https:", "webpack:", "app:"}

// cleanModuleRe strips what changes between deployments of the same file:
// leading slashes and common folders (scripts, js, build, static,
// node_modules, bower_components, dot-, underscore- and tilde-folders),
// version folders (v1, 1.0.0) and hash folders, and a hash at the end of
// the name.
var cleanModuleRe = regexp.MustCompile(`(?i)^(?:/|(?:(?:java)?scripts?|js|build|static|node_modules|bower_components|[_.~][^/]*?|v?(?:\d+\.)*\d+|[a-f0-9]{7,8}|[a-f0-9]{32}|[a-f0-9]{40})/)+|[-.][a-f0-9]{7,}$`)

// needsJSModule reports whether Sentry would give the frame a module: a
// JavaScript or Node frame without one, at a URL or bundle path.
func needsJSModule(f *Frame, platform string) bool {
	if f.Module != "" || !isJSPlatform[or(f.Platform, platform)] {
		return false
	}
	return slices.ContainsFunc(jsModuleSchemes[:], func(s string) bool { return strings.HasPrefix(f.AbsPath, s) })
}

var isJSPlatform = map[string]bool{"javascript": true, "node": true}

// JSModule is the module Sentry makes up for a JavaScript file's URL or
// path: the path without host, query, fragment, extension, ".min", and
// the folders and hashes that change between deployments. Everything
// after a 32- or 40-digit hash folder is kept as it is.
// JSModule("http://example.com/js/v1.0/foo/bar/baz.js") is "foo/bar/baz".
func JSModule(absPath string) string {
	p := stripHost(absPath)
	if i := strings.IndexAny(p, "#?"); i >= 0 {
		p = p[:i]
	}
	if i := strings.LastIndexAny(p, "./"); i >= 0 && p[i] == '.' {
		p = p[:i]
	}
	p = strings.TrimSuffix(p, ".min")
	if rest, ok := afterHashFolder(p); ok {
		return rest
	}
	return cleanModuleRe.ReplaceAllString(p, "")
}

// afterHashFolder returns what follows the first folder named by a
// content hash.
func afterHashFolder(p string) (string, bool) {
	rest := p
	for rest != "" {
		seg, tail, found := strings.Cut(rest, "/")
		if isHex(seg) && (len(seg) == 32 || len(seg) == 40) {
			return tail, true
		}
		if !found {
			break
		}
		rest = tail
	}
	return "", false
}

func isHex(s string) bool { return strings.Trim(s, "0123456789abcdefABCDEF") == "" }

// stripHost returns the path of a URL (from its first slash after the
// host), of a ~-relative path without the tilde, or the path itself.
func stripHost(p string) string {
	if rest, ok := strings.CutPrefix(p, "~"); ok {
		return rest
	}
	if _, rest, ok := strings.Cut(p, "://"); ok {
		if i := strings.IndexByte(rest, '/'); i >= 0 {
			return rest[i:]
		}
		return rest
	}
	return p
}
