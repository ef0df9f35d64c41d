package proguard

import (
	"crypto/sha1" //nolint:gosec // UUIDv5 is defined with SHA-1; this is an identifier, not a security boundary
	"encoding/hex"
)

// dnsNamespace is RFC 4122's name space for DNS names.
var dnsNamespace = [16]byte{0x6b, 0xa7, 0xb8, 0x10, 0x9d, 0xad, 0x11, 0xd1, 0x80, 0xb4, 0x00, 0xc0, 0x4f, 0xd4, 0x30, 0xc8}

// UUIDOf returns the ProGuard UUID sentry-cli gives a mapping file when it
// is uploaded without an explicit --uuid: a version 5 UUID of the file's
// exact bytes, in the name space that is itself the version 5 UUID of
// "guardsquare.com" in the DNS name space (rust-proguard's
// ProguardMapping::uuid). Sentry's Android Gradle plugin instead generates
// a random UUID per build, embeds it in the app (SDKs send it as
// debug_meta.images[].uuid of type "proguard") and uploads the mapping
// under it: a store of mappings must be keyed by the UUID they were
// uploaded with, and UUIDOf is the key only for content-addressed uploads.
// The result is lower-case and hyphenated.
func UUIDOf(content []byte) string {
	ns := uuidV5(dnsNamespace, []byte("guardsquare.com"))
	return formatUUID(uuidV5(ns, content))
}

// uuidV5 is RFC 4122 §4.3 with SHA-1.
func uuidV5(namespace [16]byte, name []byte) [16]byte {
	h := sha1.New() //nolint:gosec // see import
	h.Write(namespace[:])
	h.Write(name)
	var u [16]byte
	copy(u[:], h.Sum(nil))
	u[6] = u[6]&0x0f | 0x50 // version 5
	u[8] = u[8]&0x3f | 0x80 // RFC 4122 variant
	return u
}

func formatUUID(u [16]byte) string {
	var b [36]byte
	hex.Encode(b[0:8], u[0:4])
	b[8] = '-'
	hex.Encode(b[9:13], u[4:6])
	b[13] = '-'
	hex.Encode(b[14:18], u[6:8])
	b[18] = '-'
	hex.Encode(b[19:23], u[8:10])
	b[23] = '-'
	hex.Encode(b[24:], u[10:])
	return string(b[:])
}
