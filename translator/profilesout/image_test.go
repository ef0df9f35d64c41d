package profilesout

import (
	"path"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentry"
)

func TestFromProfilesImagesResolvable(t *testing.T) {
	type testMapping struct {
		file                 string
		start, limit, offset uint64
	}
	type testFrame struct {
		mapping int // index in mappings, -1 for none (a kernel frame)
		addr    uint64
		fn      string // "" for an address-only frame
	}
	tests := []struct {
		name     string
		mappings []testMapping
		frames   []testFrame
		// rebased: the images get new addresses; else they keep
		// memory_start - file_offset.
		rebased bool
	}{
		{
			name: "process addresses of one process keep their layout",
			mappings: []testMapping{
				{"/usr/bin/app", 0x400000, 0x520000, 0},
				{"/usr/lib/libc.so.6", 0x7f0000028000, 0x7f00001bd000, 0x28000},
			},
			frames: []testFrame{{0, 0x401234, ""}, {1, 0x7f0000029abc, ""}},
		},
		{
			name: "ELF file addresses of shared libraries overlap",
			mappings: []testMapping{
				{"/opt/python-3.11.7/lib/libpython3.11.so.1.0", 0x0, 0x331000, 0},
				{"/usr/lib/x86_64-linux-gnu/libc.so.6", 0x28000, 0x17c000, 0x28000},
				{"/opt/python-3.11.7/bin/python3.11", 0x1000, 0x2000, 0x1000},
			},
			frames:  []testFrame{{0, 0x12345, ""}, {1, 0x29abc, ""}, {2, 0x1100, "main"}, {0, 0x300000, "_PyEval_EvalFrameDefault"}},
			rebased: true,
		},
		{
			name: "a kernel frame lies in libc loaded at 0",
			mappings: []testMapping{
				{"/usr/lib/x86_64-linux-gnu/libc.so.6", 0x28000, 0x17c000, 0x28000},
				{"/usr/bin/python3.11", 0x400000, 0x6d2000, 0},
			},
			frames:  []testFrame{{-1, 0xe05, "asm_sysvec_apic_timer_interrupt"}, {0, 0x29abc, ""}, {1, 0x52b4c4, ""}},
			rebased: true,
		},
		{
			name: "a kernel frame below every image",
			mappings: []testMapping{
				{"/usr/bin/python3.11", 0x400000, 0x6d2000, 0},
			},
			frames: []testFrame{{-1, 0xe05, "asm_sysvec_apic_timer_interrupt"}, {0, 0x52b4c4, ""}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := newOTLPBuilder()
			sp := o.resource(map[string]any{"process.pid": int64(42)})
			var maps []int32
			for _, m := range tt.mappings {
				maps = append(maps, o.mapping(m.file, m.start, m.limit, m.offset, ""))
			}
			var locs []int32
			for _, f := range tt.frames {
				m := int32(0)
				if f.mapping >= 0 {
					m = maps[f.mapping]
				}
				var lines []testLine
				if f.fn != "" {
					lines = append(lines, testLine{fn: f.fn})
				}
				locs = append(locs, o.location(f.addr, m, "native", lines...))
			}
			p := o.profile(sp, "samples", "count", t0, 1e9, "cpu", "nanoseconds", 50e6)
			addSample(p, o.stack(locs...), nil, nil, []uint64{t0 + 1e6, t0 + 2e6})

			chunks, drops := FromProfiles(o.pd, ExportOptions{})
			require.Empty(t, drops)
			require.Len(t, chunks, 1)
			requireValidChunks(t, chunks)
			c := chunks[0].Profile
			requireResolvableNativeFrames(t, c)

			imageOf := map[string]sentry.Image{}
			for _, img := range c.DebugMeta.Images {
				imageOf[img.CodeFile] = img
			}
			for i, f := range tt.frames {
				require.Len(t, c.Frames, len(tt.frames))
				got := c.Frames[i] // one frame per location, in the stack's order
				require.Equal(t, f.fn, got.Function)
				if f.mapping < 0 {
					assert.Equal(t, f.addr, got.InstructionAddr, "a frame without an image keeps its address")
					assert.Empty(t, got.Package)
					continue
				}
				m := tt.mappings[f.mapping]
				img := imageOf[m.file]
				assert.Equal(t, f.addr-(m.start-m.offset), got.InstructionAddr-img.ImageAddr, "%s: the offset in the image is kept", m.file)
				assert.Equal(t, m.file, got.Package, "package: the binary")
				if f.fn == "" {
					assert.Equal(t, path.Base(m.file), got.Module, "module: the binary's name, for an address-only frame")
				} else {
					assert.Empty(t, got.Module, "a named frame keeps its module empty")
				}
				if tt.rebased {
					assert.Equal(t, m.start-m.offset, img.ImageVMAddr, "%s: image_vmaddr is the original load address", m.file)
					assert.NotEqual(t, m.start-m.offset, img.ImageAddr, "%s is rebased", m.file)
				} else {
					assert.Equal(t, m.start-m.offset, img.ImageAddr, "%s keeps its load address", m.file)
				}
			}
		})
	}
}
