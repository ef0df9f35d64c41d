package sentrygrouping

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func pyException(typ string, id int, parent int, group bool) string {
	mech := `{"type":"chained","exception_id":` + itoa(id)
	if parent >= 0 {
		mech += `,"parent_id":` + itoa(parent)
	}
	if group {
		mech += `,"is_exception_group":true`
	}
	mech += `}`
	return `{"type":"` + typ + `","value":"v","mechanism":` + mech + `,"stacktrace":{"frames":[{"module":"shop","function":"f_` + typ + `","in_app":true}]}}`
}

func pyEvent(sdk string, exceptions ...string) string {
	values := ""
	for i, e := range exceptions {
		if i > 0 {
			values += ","
		}
		values += e
	}
	return `{"platform":"python","sdk":{"version":"` + sdk + `"},"exception":{"values":[` + values + `]}}`
}

// An exception group groups by what tells it apart (the exception groups
// RFC as Sentry implements it): copies of one exception group as that
// exception alone, different ones with the group.
func TestExceptionGroups(t *testing.T) {
	lone := Group(mustEvent(t, pyEvent("2.68.0", pyException("ValueError", 0, -1, false))))
	copies := Group(mustEvent(t, pyEvent("2.68.0",
		pyException("ValueError", 2, 0, false), pyException("ValueError", 1, 0, false), pyException("ExceptionGroup", 0, -1, true))))
	mixed := Group(mustEvent(t, pyEvent("2.68.0",
		pyException("TypeError", 2, 0, false), pyException("ValueError", 1, 0, false), pyException("ExceptionGroup", 0, -1, true))))
	unfiltered := Group(mustEvent(t, pyEvent("3.0.0",
		pyException("ValueError", 2, 0, false), pyException("ValueError", 1, 0, false), pyException("ExceptionGroup", 0, -1, true))))
	cycle := Group(mustEvent(t, pyEvent("2.68.0",
		pyException("ValueError", 1, 0, true), pyException("ExceptionGroup", 0, 1, true))))

	assert.Equal(t, lone, copies)
	assert.Equal(t, []string{
		"module=shop", "function=f_ValueError", "type=ValueError",
		"module=shop", "function=f_TypeError", "type=TypeError",
		"module=shop", "function=f_ExceptionGroup", "type=ExceptionGroup",
	}, mixed.Components, "one of each leaf, by type descending, then the group")
	assert.Len(t, unfiltered.Components, 9, "sentry-python 3 groups are kept whole")
	assert.Len(t, cycle.Components, 6, "a cycle keeps the chain whole")
}

func TestCauseChainOrder(t *testing.T) {
	// @sentry/node links a cause with exception_id/parent_id; the chain
	// groups from the root (the raised error) to its cause.
	r := Group(readEvent(t, "node11_captured_event_2.json"))
	var types []string
	for _, c := range r.Components {
		if len(c) > 5 && c[:5] == "type=" {
			types = append(types, c[5:])
		}
	}
	assert.Equal(t, []string{"TypeError", "Error"}, types)
}

func TestThreads(t *testing.T) {
	thread := func(flags, fn string) string {
		return `{` + flags + `"stacktrace":{"frames":[{"module":"app","function":"` + fn + `","in_app":true}]}}`
	}
	tests := []struct {
		name    string
		threads string
		want    []string
	}{
		{"the crashed thread", thread(`"current":true,`, "a") + "," + thread(`"crashed":true,`, "b"), []string{"module=app", "function=b"}},
		{"the current thread", thread(`"current":true,`, "a") + "," + thread(``, "b"), []string{"module=app", "function=a"}},
		{"the only thread", thread(``, "a"), []string{"module=app", "function=a"}},
		{"no thread to choose: the message", thread(``, "a") + "," + thread(``, "b"), []string{"message=stuck"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := Group(mustEvent(t, `{"platform":"python","message":"stuck","threads":{"values":[`+tt.threads+`]}}`))
			assert.Equal(t, tt.want, r.Components)
		})
	}
}
