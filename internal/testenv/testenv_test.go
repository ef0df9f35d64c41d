package testenv

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// recorder stands in for a test so that a skip or a failure can be
// observed instead of ending this test.
type recorder struct {
	testing.TB
	skipped, failed bool
}

func (r *recorder) Helper()               {}
func (r *recorder) Skip(...any)           { r.skipped = true }
func (r *recorder) Fatalf(string, ...any) { r.failed = true }

func TestMissing(t *testing.T) {
	tests := []struct {
		name, env, value string
		call             func(testing.TB)
		wantSkip         bool
	}{
		{"fixture, default", RequireFixturesEnv, "", func(tb testing.TB) { MissingFixture(tb, "no %s", "fixture") }, true},
		{"fixture, required", RequireFixturesEnv, "1", func(tb testing.TB) { MissingFixture(tb, "no %s", "fixture") }, false},
		{"tool, default", RequireToolsEnv, "", func(tb testing.TB) { LookPath(tb, "no-such-tool-here", "none") }, true},
		{"tool, required", RequireToolsEnv, "1", func(tb testing.TB) { LookPath(tb, "no-such-tool-here", "none") }, false},
		{"tool, other switch set", RequireFixturesEnv, "1", func(tb testing.TB) { LookPath(tb, "no-such-tool-here", "none") }, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv(RequireFixturesEnv, "")
			t.Setenv(RequireToolsEnv, "")
			t.Setenv(tt.env, tt.value)
			r := &recorder{TB: t}
			tt.call(r)
			assert.Equal(t, tt.wantSkip, r.skipped, "skipped")
			assert.Equal(t, !tt.wantSkip, r.failed, "failed")
		})
	}
	t.Run("tool present", func(t *testing.T) {
		t.Setenv(RequireToolsEnv, "1")
		r := &recorder{TB: t}
		assert.NotEmpty(t, LookPath(r, "go", "golang"))
		assert.False(t, r.skipped || r.failed)
	})
}
