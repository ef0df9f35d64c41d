package profilesout

// Debug images: "debug_meta"."images"[] ⇄ Mapping (and the profile
// attribute sentry.debug_meta.images, which keeps every field). Here:
// imagesFromAttr for profiles that came from Sentry, imagesFromMappings and
// placeImages for the others; the way in is profilesin/image.go.

import (
	"cmp"
	"encoding/hex"
	"slices"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pprofile"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/sentryattr"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/internal/profileschema"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentry"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentryid"
)

// imagesFromAttr: profile attribute sentry.debug_meta.images →
// "debug_meta"."images", every field as received ("type", "code_file",
// "code_id", "debug_id", "debug_file", "uuid", "arch", "image_addr",
// "image_vmaddr", "image_size").
func imagesFromAttr(s pcommon.Slice) []sentry.Image {
	images := make([]sentry.Image, 0, s.Len())
	for _, v := range s.All() {
		if v.Type() != pcommon.ValueTypeMap {
			continue
		}
		m := v.Map()
		img := sentry.Image{
			Type:      profileschema.MapStr(m, profileschema.KeyType),
			CodeFile:  profileschema.MapStr(m, profileschema.KeyCodeFile),
			CodeID:    profileschema.MapStr(m, profileschema.KeyCodeID),
			DebugID:   profileschema.MapStr(m, profileschema.KeyDebugID),
			DebugFile: profileschema.MapStr(m, profileschema.KeyDebugFile),
			UUID:      profileschema.MapStr(m, profileschema.KeyUUID),
			Arch:      profileschema.MapStr(m, profileschema.KeyArch),
		}
		img.ImageAddr = sentryid.ParseHexAddr(profileschema.MapStr(m, profileschema.KeyImageAddr))
		img.ImageVMAddr = sentryid.ParseHexAddr(profileschema.MapStr(m, profileschema.KeyImageVMAddr))
		if size, ok := m.Get(profileschema.KeyImageSize); ok && size.Type() == pcommon.ValueTypeInt {
			img.ImageSize = uint64(size.Int())
		}
		images = append(images, img)
	}
	return images
}

// imagesFromMappings derives debug_meta images from the mappings the chunk's
// frames use, for profiles that did not come from Sentry: one image per
// binary, loaded at memory_start - file_offset.
//
// It also returns the image of each mapping that has one.
func imagesFromMappings(dv *dictionaryView, mappings []int32) ([]sentry.Image, map[int32]int) {
	var images []sentry.Image
	index := map[imageKey]int{}
	keyOf := map[int32]imageKey{}
	for _, mi := range mappings {
		m, ok := dv.Mapping(mi)
		if !ok || m.MemoryLimit() <= m.MemoryStart() {
			continue
		}
		img := imageOfMapping(dv, m)
		k := keyOfImage(&img)
		keyOf[mi] = k
		if i, ok := index[k]; ok {
			// Another segment of the same binary: widen the image.
			images[i].ImageSize = max(images[i].ImageSize, m.MemoryLimit()-img.ImageAddr)
			continue
		}
		img.ImageSize = m.MemoryLimit() - img.ImageAddr
		index[k] = len(images)
		images = append(images, img)
	}
	slices.SortStableFunc(images, func(a, b sentry.Image) int { return cmp.Compare(a.ImageAddr, b.ImageAddr) })
	for i := range images {
		index[keyOfImage(&images[i])] = i
	}
	imageOf := make(map[int32]int, len(keyOf))
	for m, k := range keyOf {
		imageOf[m] = index[k]
	}
	return images, imageOf
}

// imageKey is one binary loaded at one address: the segments of its
// mappings make one image.
type imageKey struct {
	file, buildID string
	base          uint64
}

func keyOfImage(img *sentry.Image) imageKey {
	return imageKey{file: img.CodeFile, buildID: img.CodeID, base: img.ImageAddr}
}

// imageOfMapping: Mapping.filename → "code_file"; the mapping attributes
// back to "type", "code_id" (or the GNU build id), "debug_id" (or derived
// from the build id), "debug_file", "uuid", "arch", "image_vmaddr";
// Mapping.memory_start − file_offset → "image_addr". Its "image_size" is
// the caller's: a binary's segments share one image.
func imageOfMapping(dv *dictionaryView, m pprofile.Mapping) sentry.Image {
	img := sentry.Image{CodeFile: dv.Str(m.FilenameStrindex())}
	var gnuBuildID string
	dv.attrs.Each(m.AttributeIndices(), func(key string, v pcommon.Value) {
		if key == string(semconv.ProcessExecutableBuildIDGNUKey) {
			gnuBuildID = v.AsString()
			return
		}
		putImageAttr(&img, key, v)
	})
	if gnuBuildID != "" {
		img.CodeID = cmp.Or(img.CodeID, gnuBuildID)
		img.DebugID = cmp.Or(img.DebugID, debugIDFromBuildID(gnuBuildID))
		img.Type = cmp.Or(img.Type, "elf")
	}
	img.Type = cmp.Or(img.Type, imageTypeOfFile(img.CodeFile))
	img.ImageAddr = m.MemoryStart()
	if m.FileOffset() <= m.MemoryStart() {
		img.ImageAddr = m.MemoryStart() - m.FileOffset()
	}
	return img
}

// putImageAttr: mapping attributes sentry.image.type, .code_id,
// .debug_id, .debug_file, .uuid, .arch, .image_vmaddr → the image's
// "type", "code_id", "debug_id", "debug_file", "uuid", "arch",
// "image_vmaddr".
func putImageAttr(img *sentry.Image, key string, v pcommon.Value) {
	switch key {
	case sentryattr.ImageType:
		img.Type = v.AsString()
	case sentryattr.ImageCodeID:
		img.CodeID = v.AsString()
	case sentryattr.ImageDebugID:
		img.DebugID = v.AsString()
	case sentryattr.ImageDebugFile:
		img.DebugFile = v.AsString()
	case sentryattr.ImageUUID:
		img.UUID = v.AsString()
	case sentryattr.ImageArch:
		img.Arch = v.AsString()
	case sentryattr.ImageImageVMAddr:
		img.ImageVMAddr = sentryid.ParseHexAddr(v.AsString())
	}
}

// imageTypeOfFile guesses the debug file format of a binary from its name;
// Linux ELF when nothing tells.
func imageTypeOfFile(name string) string {
	lower := strings.ToLower(name)
	switch {
	case strings.HasSuffix(lower, ".dll"), strings.HasSuffix(lower, ".exe"):
		return "pe"
	case strings.HasSuffix(lower, ".dylib"), strings.Contains(lower, ".framework/"), strings.Contains(lower, ".app/"):
		return "macho"
	}
	return "elf"
}

// debugIDFromBuildID turns a GNU build id into the debug id Sentry's
// symbolicator derives from it: the first 16 bytes read as a little-endian
// GUID (zero-padded when shorter), formatted as a UUID.
func debugIDFromBuildID(buildID string) string {
	raw, err := hex.DecodeString(buildID)
	if err != nil || len(raw) == 0 {
		return ""
	}
	var g [16]byte
	copy(g[:], raw)
	g[0], g[1], g[2], g[3] = g[3], g[2], g[1], g[0]
	g[4], g[5] = g[5], g[4]
	g[6], g[7] = g[7], g[6]
	s := hex.EncodeToString(g[:])
	return s[0:8] + "-" + s[8:12] + "-" + s[12:16] + "-" + s[16:20] + "-" + s[20:32]
}

// Rebasing: how images that overlap are laid out again.
const (
	// rebaseAlign is where the rebased images start: a multiple of 4 GiB
	// above every address the chunk already uses.
	rebaseAlign = 1 << 32
	// imageAlign is the alignment of each rebased image: pages, as a loader
	// would place them.
	imageAlign = 1 << 12
)

// placeImages makes every native frame of the chunk resolvable to exactly
// one image. Profilers that report ELF file addresses (the OpenTelemetry
// eBPF profiler: memory_start − file_offset is 0 for every PIE executable
// and shared library) give images that overlap: a symbolicator, which finds
// a frame's image by its absolute address, cannot tell libc from
// libpython. When the images overlap, each one gets a new image_addr,
// page-aligned one after the other above every address the chunk uses, and
// the frames of its mappings move with it, keeping their offset in the
// image (what symbolication reads: instruction_addr − image_addr). Its
// original load address stays as image_vmaddr when it had one.
//
// Why not `addr_mode: "rel:<index>"`, which Sentry's event protocol has for
// this: Relay's profile frame keeps only abs_path, colno, filename,
// function, in_app, instruction_addr, lineno, module and platform
// (relay-profiling sample::Frame), so the mode would be dropped on ingest
// and the addresses would stay ambiguous.
//
// The same happens when a frame that is in no image of its own (a kernel
// frame: the eBPF profiler gives kernel addresses as small offsets) lies in
// an image: a libc loaded at 0 would otherwise claim it.
//
// Images that do not overlap and claim no foreign frame (a pprof profile of
// one process) keep their addresses. When no room is left in the 64-bit
// space, nothing changes.
//
// frames are the chunk's frames, frameMappings the dictionary mapping of
// each (0 for none); the frames' addresses are rewritten in place.
func placeImages(frames []sentry.Frame, frameMappings []int32, images []sentry.Image, imageOf map[int32]int) []sentry.Image {
	if len(images) == 0 {
		return images
	}
	inImage, loose := framesInImages(frames, frameMappings, images, imageOf)
	if !imagesOverlap(images) && !anyInImage(loose, images) {
		return images
	}
	total, ok := rebasedSize(images)
	if !ok {
		return images
	}
	base, ok := rebaseAbove(images, loose, total)
	if !ok {
		return images
	}
	out, oldAddr := rebaseImages(images, base)
	for i := range frames {
		if inImage[i] {
			idx := imageOf[frameMappings[i]]
			frames[i].InstructionAddr = out[idx].ImageAddr + (frames[i].InstructionAddr - oldAddr[idx])
		}
	}
	return out
}

// framesInImages tells which frames lie in the image of their mapping
// (inImage); the addresses of the others (kernel frames, frames without a
// mapping), sorted, are loose: they keep their address, and must then lie
// in no image.
func framesInImages(frames []sentry.Frame, frameMappings []int32, images []sentry.Image, imageOf map[int32]int) (inImage []bool, loose []uint64) {
	inImage = make([]bool, len(frames))
	for i := range frames {
		addr := frames[i].InstructionAddr
		if addr == 0 {
			continue
		}
		if idx, ok := imageOf[frameMappings[i]]; ok && inImageRange(addr, images[idx]) {
			inImage[i] = true
			continue
		}
		loose = append(loose, addr)
	}
	slices.Sort(loose)
	return inImage, loose
}

// inImageRange reports whether addr lies in img.
func inImageRange(addr uint64, img sentry.Image) bool {
	return addr >= img.ImageAddr && addr-img.ImageAddr < img.ImageSize
}

// rebasedSize is the room the images take laid out one after the other,
// each page-aligned; false when that overflows.
func rebasedSize(images []sentry.Image) (uint64, bool) {
	var total uint64
	for _, img := range images {
		size, ok := alignUp(img.ImageSize, imageAlign)
		if !ok || total+size < total {
			return 0, false
		}
		total += size
	}
	return total, true
}

// rebaseAbove is where the rebased images (total bytes) start: the first
// multiple of rebaseAlign above every image whose range holds no loose
// address; false when none is left in the 64-bit space.
func rebaseAbove(images []sentry.Image, loose []uint64, total uint64) (uint64, bool) {
	var top uint64
	for _, img := range images {
		top = max(top, img.ImageAddr+img.ImageSize)
	}
	base, ok := alignUp(top, rebaseAlign)
	for _, a := range loose {
		if !ok || base+total < base {
			return 0, false
		}
		if a >= base && a < base+total {
			base, ok = alignUp(a+1, rebaseAlign)
		}
	}
	return base, ok && base+total >= base
}

// rebaseImages lays the images out from base, page-aligned in order; each
// keeps its original load address as image_vmaddr when it had none. It
// returns the images and their old image_addr.
func rebaseImages(images []sentry.Image, base uint64) (out []sentry.Image, oldAddr []uint64) {
	oldAddr = make([]uint64, len(images))
	out = slices.Clone(images)
	next := base
	for i := range out {
		oldAddr[i] = out[i].ImageAddr
		if out[i].ImageVMAddr == 0 {
			out[i].ImageVMAddr = out[i].ImageAddr
		}
		out[i].ImageAddr = next
		size, _ := alignUp(out[i].ImageSize, imageAlign)
		next += size
	}
	return out, oldAddr
}

// anyInImage reports whether one of the sorted addresses lies in one of the
// images (sorted by image_addr).
func anyInImage(sorted []uint64, images []sentry.Image) bool {
	for _, img := range images {
		i, _ := slices.BinarySearch(sorted, img.ImageAddr)
		if i < len(sorted) && sorted[i]-img.ImageAddr < img.ImageSize {
			return true
		}
	}
	return false
}

// imagesOverlap reports whether two images of a list sorted by image_addr
// share an address.
func imagesOverlap(images []sentry.Image) bool {
	for i := 1; i < len(images); i++ {
		prev := images[i-1]
		if end := prev.ImageAddr + prev.ImageSize; end < prev.ImageAddr || end > images[i].ImageAddr {
			return true
		}
	}
	return false
}

// alignUp rounds v up to a multiple of align (a power of two); false when
// that overflows.
func alignUp(v, align uint64) (uint64, bool) {
	r := (v + align - 1) &^ (align - 1)
	return r, r >= v
}
