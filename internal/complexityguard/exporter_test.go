package complexityguard

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pprofile"

	"github.com/sentryprofile/otelcol-sentryprofile/translator/profilesout"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentry"
)

// otlpProfiles builds OTLP profiles as a sender chooses them: one string
// table, and per resource one CPU profile.
type otlpProfiles struct {
	pd      pprofile.Profiles
	strings map[string]int32
}

func newOTLPProfiles() *otlpProfiles {
	o := &otlpProfiles{pd: pprofile.NewProfiles(), strings: map[string]int32{}}
	d := o.pd.Dictionary()
	// Index 0 of every table is the zero entry (pdata does not seed it).
	o.str("")
	d.FunctionTable().AppendEmpty()
	d.LocationTable().AppendEmpty()
	d.MappingTable().AppendEmpty()
	d.StackTable().AppendEmpty()
	d.AttributeTable().AppendEmpty()
	return o
}

func (o *otlpProfiles) str(s string) int32 {
	if i, ok := o.strings[s]; ok {
		return i
	}
	i := int32(o.pd.Dictionary().StringTable().Len())
	o.pd.Dictionary().StringTable().Append(s)
	o.strings[s] = i
	return i
}

// function adds a function named name and a location and a one-frame
// stack calling it; it returns the stack's index.
func (o *otlpProfiles) function(name, file string) int32 {
	d := o.pd.Dictionary()
	f := d.FunctionTable().AppendEmpty()
	f.SetNameStrindex(o.str(name))
	f.SetFilenameStrindex(o.str(file))
	loc := d.LocationTable().AppendEmpty()
	loc.Lines().AppendEmpty().SetFunctionIndex(int32(d.FunctionTable().Len() - 1))
	st := d.StackTable().AppendEmpty()
	st.LocationIndices().Append(int32(d.LocationTable().Len() - 1))
	return int32(d.StackTable().Len() - 1)
}

// profile adds a resource of service service with one CPU profile.
func (o *otlpProfiles) profile(service string) pprofile.Profile {
	rp := o.pd.ResourceProfiles().AppendEmpty()
	rp.Resource().Attributes().PutStr("service.name", service)
	p := rp.ScopeProfiles().AppendEmpty().Profiles().AppendEmpty()
	p.SampleType().SetTypeStrindex(o.str("cpu"))
	p.SampleType().SetUnitStrindex(o.str("nanoseconds"))
	p.PeriodType().SetTypeStrindex(o.str("cpu"))
	p.PeriodType().SetUnitStrindex(o.str("nanoseconds"))
	p.SetPeriod(10_000_000)
	p.SetTime(pcommon.Timestamp(exportStart))
	p.SetDurationNano(uint64(10 * time.Second))
	return p
}

// exportStart is the profiles' start: a fixed time, so that every run
// converts the same windows.
const exportStart = 1_795_000_000_000_000_000

// exportRow converts the profiles of size n to Sentry chunks and their
// JSON, as the exporter's push does. work is the sample events of the
// chunks.
func exportRow(build func(n int) pprofile.Profiles) func(testing.TB, int) sized {
	return func(tb testing.TB, n int) sized {
		pd := build(n)
		input := int64((&pprofile.ProtoMarshaler{}).ProfilesSize(pd))
		var out, events int64
		return sized{
			run: func() {
				out, events = 0, 0
				chunks, _ := profilesout.FromProfiles(pd, profilesout.ExportOptions{})
				for _, c := range chunks {
					out += int64(len(sentry.AppendChunkJSON(nil, c.Profile)))
					events += int64(len(c.Profile.Samples))
				}
			},
			observe: func() outcome {
				if out == 0 {
					tb.Errorf("the conversion made no chunk, so the row measured nothing")
				}
				return outcome{input: input, output: out, work: events}
			},
		}
	}
}

// maxExportEvents is the documented bound of the events one conversion
// makes beyond one per sample of its input, for the whole request
// (translator/profilesout/export_limits.go maxRequestExtraEvents, 2^19), and
// bytesPerEvent what one may cost in a chunk's JSON (measured: 64).
const (
	maxExportEvents = 1 << 19
	bytesPerEvent   = 80
)

func exporterRows() []row {
	return []row{
		{
			name: "export_functions", dimension: "functions, stacks and timestamped samples", n: 500, clock: ThreadClock,
			fuzz: []string{"translator/profilesout.FuzzFromProfiles", "translator/sentry.FuzzEncodeRoundTrip", "translator/internal/jsontext.FuzzAppendString"},
			build: exportRow(func(n int) pprofile.Profiles {
				o := newOTLPProfiles()
				p := o.profile("shop")
				for i := range n {
					s := p.Samples().AppendEmpty()
					s.SetStackIndex(o.function("fn_"+strconv.Itoa(i), "app.py"))
					s.TimestampsUnixNano().Append(uint64(exportStart + i*1_000_000))
				}
				return o.pd
			}),
		},
		{
			name: "export_string_named_by_functions", dimension: "length of one string × functions naming it", n: 32,
			defect: "#9: a string named by many functions is copied into every frame of the chunk (1 MiB × 2,000 functions: RSS > 3 GiB)",
			build: exportRow(func(n int) pprofile.Profiles {
				o := newOTLPProfiles()
				p := o.profile("shop")
				name := strings.Repeat("n", 512*n)
				for i := range n {
					s := p.Samples().AppendEmpty()
					s.SetStackIndex(o.function(name, "file_"+strconv.Itoa(i)+".py"))
					s.TimestampsUnixNano().Append(uint64(exportStart + i*1_000_000))
				}
				return o.pd
			}),
		},
		{
			// Every resource brings one sample whose aggregated value says
			// 2^16 events: the conversion expands values into events, and
			// its documented bound holds per profile but not per request.
			name: "export_aggregated_values_per_request", dimension: "resources with one aggregated sample of 2^16 events", n: 2,
			defect: "#9: the events bound holds per profile, not per request (64 resources × value 2^62: RSS > 3 GiB)",
			// One event per input sample (one per resource) plus the
			// request's budget.
			maxWork:   func(n int) int64 { return int64(n) + maxExportEvents },
			maxOutput: func(input int64) int64 { return linearOutput(input) + maxExportEvents*bytesPerEvent },
			build: exportRow(func(n int) pprofile.Profiles {
				o := newOTLPProfiles()
				for i := range n {
					p := o.profile("svc_" + strconv.Itoa(i))
					s := p.Samples().AppendEmpty()
					s.SetStackIndex(o.function("fn_"+strconv.Itoa(i), "app.py"))
					s.Values().Append(1 << 16 * 10_000_000) // 2^16 periods of 10 ms
				}
				return o.pd
			}),
		},
	}
}
