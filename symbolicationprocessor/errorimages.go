package symbolicationprocessor // import "github.com/sentryprofile/otelcol-sentryprofile/symbolicationprocessor"

import (
	"cmp"
	"slices"
	"strconv"
	"strings"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/pmap"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/sentryattr"
)

// errorImages are what an error event's debug_meta.images identify: the
// artifacts its frames are resolved with.
type errorImages struct {
	// sourceMaps maps a bundle's URL or path (a `sourcemap` image's
	// code_file, the abs_path of its frames) to its debug id.
	sourceMaps map[string]string
	// proguardUUID is the uuid of the event's first `proguard` image.
	proguardUUID string
	// native are the ELF images with a GNU build id, by load address.
	native []nativeErrorImage
}

// nativeErrorImage is a loaded binary: its address range and build id.
type nativeErrorImage struct {
	start, end uint64
	buildID    string
	file       string
}

// readErrorImages reads a record's sentry.debug_meta images. Its work is
// linear in the images (n log n to sort the native ones).
func readErrorImages(attrs pcommon.Map) errorImages {
	var im errorImages
	for _, v := range pmap.Slice(pmap.Map(attrs, sentryattr.EventDebugMeta), "images").All() {
		if v.Type() == pcommon.ValueTypeMap {
			im.add(v.Map())
		}
	}
	im.sortNative()
	return im
}

// add reads one image by its type.
func (im *errorImages) add(img pcommon.Map) {
	switch mapStr(img, "type") {
	case "sourcemap":
		im.addSourceMap(mapStr(img, "code_file"), mapStr(img, "debug_id"))
	case "proguard":
		im.proguardUUID = cmp.Or(im.proguardUUID, strings.ToLower(mapStr(img, "uuid")))
	case "elf":
		im.addNative(img)
	}
}

func (im *errorImages) addSourceMap(file, debugID string) {
	if file == "" || debugID == "" {
		return
	}
	if im.sourceMaps == nil {
		im.sourceMaps = map[string]string{}
	}
	im.sourceMaps[file] = debugID
}

// addNative keeps an ELF image whose code_id (its GNU build id, as Sentry's
// native SDKs send it) and image_addr are known. Its end is image_addr +
// image_size, or the next image's start when the size is not sent.
func (im *errorImages) addNative(img pcommon.Map) {
	buildID := strings.ToLower(mapStr(img, "code_id"))
	start, ok := mapAddr(img, "image_addr")
	if buildID == "" || !ok {
		return
	}
	size, _ := mapAddr(img, "image_size")
	end := start + size
	if size == 0 || end < start {
		end = 0 // set by sortNative
	}
	im.native = append(im.native, nativeErrorImage{start: start, end: end, buildID: buildID, file: mapStr(img, "code_file")})
}

// sortNative orders the native images by start and bounds each image
// without a size by the next one's start.
func (im *errorImages) sortNative() {
	slices.SortFunc(im.native, func(a, b nativeErrorImage) int { return cmp.Compare(a.start, b.start) })
	for i := range im.native {
		if im.native[i].end != 0 {
			continue
		}
		im.native[i].end = ^uint64(0)
		if i+1 < len(im.native) {
			im.native[i].end = im.native[i+1].start
		}
	}
}

// nativeImageAt is the image whose range holds addr; false when none does.
func (im *errorImages) nativeImageAt(addr uint64) (nativeErrorImage, bool) {
	i, _ := slices.BinarySearchFunc(im.native, addr, func(img nativeErrorImage, a uint64) int {
		return cmp.Compare(img.start, a+1) // the first image starting after addr
	})
	if i == 0 {
		return nativeErrorImage{}, false
	}
	if img := im.native[i-1]; addr < img.end {
		return img, true
	}
	return nativeErrorImage{}, false
}

// mapStr is a string member; other types read as empty.
func mapStr(m pcommon.Map, key string) string {
	if v, ok := m.Get(key); ok && v.Type() == pcommon.ValueTypeStr {
		return v.Str()
	}
	return ""
}

// mapInt is an integer member: an Int, or a Double that holds one.
func mapInt(m pcommon.Map, key string) (int64, bool) {
	v, ok := m.Get(key)
	if !ok {
		return 0, false
	}
	switch v.Type() {
	case pcommon.ValueTypeInt:
		return v.Int(), true
	case pcommon.ValueTypeDouble:
		d := v.Double()
		return int64(d), d == float64(int64(d))
	}
	return 0, false
}

// mapAddr is an address member as Sentry sends addresses: a hex string
// ("0x7f3a…"), or an integer.
func mapAddr(m pcommon.Map, key string) (uint64, bool) {
	v, ok := m.Get(key)
	if !ok {
		return 0, false
	}
	switch v.Type() {
	case pcommon.ValueTypeStr:
		return parseAddr(v.Str())
	case pcommon.ValueTypeInt:
		return uint64(v.Int()), v.Int() >= 0
	}
	return 0, false
}

// parseAddr reads "0x…" hex, or decimal digits.
func parseAddr(s string) (uint64, bool) {
	if h, ok := strings.CutPrefix(strings.ToLower(s), "0x"); ok {
		n, err := strconv.ParseUint(h, 16, 64)
		return n, err == nil
	}
	n, err := strconv.ParseUint(s, 10, 64)
	return n, err == nil
}
