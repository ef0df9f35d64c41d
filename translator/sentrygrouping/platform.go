package sentrygrouping

import "strings"

// Behaviour families of platforms, as src/sentry/stacktraces/platform.py
// sorts them.
const (
	familyJavaScript = "javascript"
	familyNative     = "native"
	familyJava       = "java"
	familyOther      = "other"
)

func behaviourFamily(platform string) string {
	switch platform {
	case "javascript", "node":
		return familyJavaScript
	case "objc", "cocoa", "swift", "native", "c":
		return familyNative
	case "java", "groovy":
		return familyJava
	}
	return familyOther
}

// hasURLOrigin is Sentry's has_url_origin (strategies/utils.py): whether a
// path is a URL, file: URLs counting only when filesAreURLs.
func hasURLOrigin(path string, filesAreURLs bool) bool {
	for _, p := range [...]string{"http:", "https:", "applewebdata:", "blob:"} {
		if strings.HasPrefix(path, p) {
			return true
		}
	}
	return filesAreURLs && strings.HasPrefix(path, "file:")
}
