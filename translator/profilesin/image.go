package profilesin

// Debug images: "debug_meta"."images"[] ⇄ Mapping (and the profile
// attribute sentry.debug_meta.images, which keeps every field). Here:
// mappingOfImage, debugImagesAttr; the way back is profilesout/image.go.

import (
	"cmp"

	"go.opentelemetry.io/collector/pdata/pcommon"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/sentryattr"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/internal/profileschema"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentry"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentryid"
)

// mappingFields is what a debug_meta image maps to: its Mapping.
type mappingFields struct {
	memoryStart, memoryLimit uint64
	hasLimit                 bool
	filename                 string
	attrs                    [7]stringAttr // "" values left out
}

// mappingOfImage maps a debug_meta image.
func mappingOfImage(img *sentry.Image) mappingFields {
	var m mappingFields
	// "image_addr", "image_size" → Mapping.memory_start, memory_limit.
	m.memoryStart = img.ImageAddr
	if img.ImageAddr+img.ImageSize >= img.ImageAddr {
		m.memoryLimit, m.hasLimit = img.ImageAddr+img.ImageSize, true
	}
	// "code_file" → Mapping.filename ("debug_file" when there is no code
	// file).
	m.filename = cmp.Or(img.CodeFile, img.DebugFile)
	// "type" → sentry.image.type.
	m.attrs[0] = stringAttr{sentryattr.ImageType, img.Type}
	// "code_id" → process.executable.build_id.gnu for an ELF image (its GNU
	// build id, which semconv names), else sentry.image.code_id.
	if img.Type == "elf" {
		m.attrs[1] = stringAttr{string(semconv.ProcessExecutableBuildIDGNUKey), img.CodeID}
	} else {
		m.attrs[1] = stringAttr{sentryattr.ImageCodeID, img.CodeID}
	}
	// "debug_id", "debug_file", "uuid", "arch", "image_vmaddr" →
	// sentry.image.debug_id, .debug_file, .uuid, .arch, .image_vmaddr.
	m.attrs[2] = stringAttr{sentryattr.ImageDebugID, img.DebugID}
	if img.CodeFile != "" {
		m.attrs[3] = stringAttr{sentryattr.ImageDebugFile, img.DebugFile}
	}
	m.attrs[4] = stringAttr{sentryattr.ImageUUID, img.UUID}
	m.attrs[5] = stringAttr{sentryattr.ImageArch, img.Arch}
	if img.ImageVMAddr != 0 {
		m.attrs[6] = stringAttr{sentryattr.ImageImageVMAddr, sentryid.HexAddr(img.ImageVMAddr)}
	}
	return m
}

func putImage(m pcommon.Map, img sentry.Image) {
	profileschema.PutNonEmpty(m, profileschema.KeyType, img.Type)
	profileschema.PutNonEmpty(m, profileschema.KeyCodeFile, img.CodeFile)
	profileschema.PutNonEmpty(m, profileschema.KeyCodeID, img.CodeID)
	profileschema.PutNonEmpty(m, profileschema.KeyDebugID, img.DebugID)
	profileschema.PutNonEmpty(m, profileschema.KeyDebugFile, img.DebugFile)
	profileschema.PutNonEmpty(m, profileschema.KeyUUID, img.UUID)
	profileschema.PutNonEmpty(m, profileschema.KeyArch, img.Arch)
	if img.ImageAddr != 0 {
		m.PutStr(profileschema.KeyImageAddr, sentryid.HexAddr(img.ImageAddr))
	}
	if img.ImageVMAddr != 0 {
		m.PutStr(profileschema.KeyImageVMAddr, sentryid.HexAddr(img.ImageVMAddr))
	}
	if img.ImageSize != 0 {
		m.PutInt(profileschema.KeyImageSize, int64(img.ImageSize))
	}
}

// debugImagesAttr: "debug_meta"."images" → profile attribute
// sentry.debug_meta.images, every field of every image, beside the
// Mappings: a Mapping has no place for most of them. Back: imagesFromAttr.
func debugImagesAttr(p *sentry.Profile) profileAttr {
	if len(p.DebugMeta.Images) == 0 {
		return profileAttr{}
	}
	v := pcommon.NewValueSlice()
	s := v.Slice()
	s.EnsureCapacity(len(p.DebugMeta.Images))
	for _, img := range p.DebugMeta.Images {
		putImage(s.AppendEmpty().SetEmptyMap(), img)
	}
	return profileAttr{key: sentryattr.DebugImages, value: v}
}
