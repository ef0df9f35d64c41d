package translator

import (
	"slices"

	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentry"
)

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
func (c *chunkBuilder) placeImages(images []sentry.Image, imageOf map[int32]int) []sentry.Image {
	if len(images) == 0 {
		return images
	}
	frames := c.p.Frames
	// inImage: frames whose address lies in the image of their mapping;
	// the others (kernel frames, frames without a mapping) keep their
	// address, and must then lie in no image.
	inImage := make([]bool, len(frames))
	var loose []uint64
	var top uint64
	for _, img := range images {
		top = max(top, img.ImageAddr+img.ImageSize)
	}
	for i := range frames {
		addr := frames[i].InstructionAddr
		if addr == 0 {
			continue
		}
		if idx, ok := imageOf[c.frameMappings[i]]; ok {
			img := images[idx]
			if addr >= img.ImageAddr && addr-img.ImageAddr < img.ImageSize {
				inImage[i] = true
				continue
			}
		}
		loose = append(loose, addr)
	}
	slices.Sort(loose)
	if !imagesOverlap(images) && !anyInImage(loose, images) {
		return images
	}
	var total uint64
	for _, img := range images {
		size, ok := alignUp(img.ImageSize, imageAlign)
		if !ok || total+size < total {
			return images
		}
		total += size
	}
	base, ok := alignUp(top, rebaseAlign)
	if !ok {
		return images
	}
	for _, a := range loose {
		if base+total < base {
			return images
		}
		if a >= base && a < base+total {
			if base, ok = alignUp(a+1, rebaseAlign); !ok {
				return images
			}
		}
	}
	if base+total < base {
		return images
	}

	oldAddr := make([]uint64, len(images))
	out := slices.Clone(images)
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
	for i := range frames {
		if inImage[i] {
			idx := imageOf[c.frameMappings[i]]
			frames[i].InstructionAddr = out[idx].ImageAddr + (frames[i].InstructionAddr - oldAddr[idx])
		}
	}
	return out
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
