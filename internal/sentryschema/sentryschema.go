// Package sentryschema gives tests Sentry's published event schema
// (getsentry/sentry-data-schemas, relay/event.schema.json), compiled with
// Relay's reading of its formats. The schema is Sentry's text, so it is not
// part of this repository: it is read from SENTRY_EVENT_SCHEMA, or from the
// mirror of that repository the search tool's fetch keeps beside the
// checkout's parent (/work/.mirror), and a test without either is skipped
// with the way to get it.
package sentryschema // import "github.com/sentryprofile/otelcol-sentryprofile/internal/sentryschema"

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentry"
)

// EnvFile names a file holding relay/event.schema.json.
const EnvFile = "SENTRY_EVENT_SCHEMA"

// mirrorRepo is the fetched repository's git directory, from the module
// root: the mirror sits beside the folder the checkout is in.
var mirrorRepo = filepath.Join("..", ".mirror", "getsentry+sentry-data-schemas", "repo")

// Event returns the compiled event schema, or skips tb when it is not here.
func Event(tb testing.TB) *jsonschema.Schema {
	tb.Helper()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(read(tb)))
	if err != nil {
		tb.Fatalf("event schema: %v", err)
	}
	c := jsonschema.NewCompiler()
	// The schema is generated from Relay's Rust types, whose "uuid" is read
	// by the uuid crate: the hyphenated form and the simple one (32 hex
	// digits) every Sentry SDK writes. JSON Schema's own uuid format knows
	// only the first; Relay's meaning is the one that counts.
	c.RegisterFormat(&jsonschema.Format{Name: "uuid", Validate: relayUUID})
	c.AssertFormat()
	if err := c.AddResource("event.schema.json", doc); err != nil {
		tb.Fatalf("event schema: %v", err)
	}
	s, err := c.Compile("event.schema.json")
	if err != nil {
		tb.Fatalf("event schema: %v", err)
	}
	return s
}

func read(tb testing.TB) []byte {
	tb.Helper()
	if file := os.Getenv(EnvFile); file != "" {
		raw, err := os.ReadFile(file)
		if err != nil {
			tb.Fatalf("%s: %v", EnvFile, err)
		}
		return raw
	}
	root, err := moduleRoot()
	if err != nil {
		tb.Skipf("Sentry's event schema: cannot find the module root: %v", err)
	}
	repo := filepath.Join(root, mirrorRepo)
	raw, err := exec.Command("git", "--git-dir="+repo, "show", "HEAD:relay/event.schema.json").Output()
	if err != nil {
		tb.Skipf("Sentry's event schema is not here: set %s to relay/event.schema.json of "+
			"getsentry/sentry-data-schemas, or fetch that repository into %s (%v)", EnvFile, repo, err)
	}
	return raw
}

func moduleRoot() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", err
	}
	mod := string(bytes.TrimSpace(out))
	if mod == "" || mod == os.DevNull {
		return "", fmt.Errorf("not inside a module")
	}
	return filepath.Dir(mod), nil
}

func relayUUID(v any) error {
	s, ok := v.(string)
	if !ok {
		return nil
	}
	if _, ok := sentry.CanonicalUUID(s); !ok {
		return fmt.Errorf("%q is not a uuid as Relay reads one", s)
	}
	return nil
}
