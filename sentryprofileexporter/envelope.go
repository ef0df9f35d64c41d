package sentryprofileexporter // import "github.com/sentryprofile/otelcol-sentryprofile/sentryprofileexporter"

import (
	"crypto/rand"
	"encoding/hex"
	"time"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/sentryhttp"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/envelope"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/itemrules"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentry"
)

const (
	itemTypeProfileChunk = itemrules.ItemTypeProfileChunk

	// maxItemBytes is Relay's limit for one profile item; a larger chunk is
	// rejected by Sentry, so it is dropped here with the reason Relay uses.
	maxItemBytes = itemrules.MaxProfileItemBytes
	// maxEnvelopeBytes keeps an envelope well under Relay's 200 MiB limit on
	// a decompressed envelope, and a request to a size proxies accept.
	maxEnvelopeBytes = 20 << 20
	// maxEnvelopeChunks bounds the items of one envelope. Relay takes every
	// profile_chunk item of an envelope and sets no count limit; this one
	// bounds what one failed POST sends again.
	maxEnvelopeChunks = 100
)

// encodedChunk is one chunk serialized as a `profile_chunk` item payload.
type encodedChunk struct {
	chunkID  string
	platform string
	payload  []byte
	samples  int // len(profile.samples): what Sentry counts
	plan     int // index of its resourcePlan
}

// envelopeBatch is chunks of one project that travel in one envelope,
// from one or more resources (plans). All of them belong to one
// rate-limit category: Relay answers 429 only when every item of an
// envelope is limited and silently drops the limited items otherwise, so
// mixing categories could lose data behind a 200.
type envelopeBatch struct {
	category string
	chunks   []encodedChunk
	size     int
	plans    []int // of its chunks, each once, in order
}

// categoryOf is the data category Relay counts a profile chunk in, decided by
// the `platform` item header (relay-profiling ProfileType::from_platform).
func categoryOf(platform string) string {
	switch platform {
	case "cocoa", "android", "javascript":
		return sentryhttp.CategoryProfileChunkUI
	default:
		return sentryhttp.CategoryProfileChunk
	}
}

// packEnvelopes puts the chunks of one project, ordered by plan, into as
// few envelopes as Relay's limits allow: one or more per category, in the
// order the categories first appear. A resource's chunks of one category
// start a new envelope rather than straddle two, unless they alone pass a
// limit: a failed envelope then sends again only whole resources.
func packEnvelopes(chunks []encodedChunk) []envelopeBatch {
	pk := packer{open: map[string]int{}}
	for start := 0; start < len(chunks); {
		end := start
		for end < len(chunks) && chunks[end].plan == chunks[start].plan {
			end++
		}
		pk.addResource(chunks[start:end])
		start = end
	}
	return pk.batches
}

// packer is the batches of one project as they fill.
type packer struct {
	batches []envelopeBatch
	open    map[string]int // category → index of its last batch
}

// load is what chunks of one category add to a batch.
type load struct{ size, count int }

// fitsAlone reports whether the load fits an envelope of its own.
func (l load) fitsAlone() bool { return l.size <= maxEnvelopeBytes && l.count <= maxEnvelopeChunks }

// addResource adds the chunks of one resource to the batches.
func (pk *packer) addResource(chunks []encodedChunk) {
	loads := map[string]load{}
	for _, c := range chunks {
		cat := categoryOf(c.platform)
		loads[cat] = load{size: loads[cat].size + len(c.payload), count: loads[cat].count + 1}
	}
	started := map[string]bool{}
	for _, c := range chunks {
		cat := categoryOf(c.platform)
		b := pk.batchFor(cat, len(c.payload), loads[cat], !started[cat])
		started[cat] = true
		b.add(c)
	}
}

// batchFor is the batch a chunk of cat joins: the category's open one,
// unless it is full or (for the resource's first chunk of the category)
// the resource's chunks would straddle it and the next; then a new one.
func (pk *packer) batchFor(cat string, payload int, resource load, first bool) *envelopeBatch {
	i, ok := pk.open[cat]
	if !ok || pk.batches[i].fullFor(payload) || (first && pk.batches[i].straddledBy(resource)) {
		pk.batches = append(pk.batches, envelopeBatch{category: cat})
		i = len(pk.batches) - 1
		pk.open[cat] = i
	}
	return &pk.batches[i]
}

// fullFor reports whether a payload of that size no longer fits b.
func (b *envelopeBatch) fullFor(payload int) bool {
	return b.size+payload > maxEnvelopeBytes || len(b.chunks) == maxEnvelopeChunks
}

// straddledBy reports whether a resource's chunks would fit an envelope
// of their own but not b, which already holds others.
func (b *envelopeBatch) straddledBy(resource load) bool {
	return len(b.chunks) > 0 && resource.fitsAlone() &&
		(b.size+resource.size > maxEnvelopeBytes || len(b.chunks)+resource.count > maxEnvelopeChunks)
}

// add appends a chunk, and its plan when it starts one.
func (b *envelopeBatch) add(c encodedChunk) {
	b.chunks = append(b.chunks, c)
	b.size += len(c.payload)
	if n := len(b.plans); n == 0 || b.plans[n-1] != c.plan {
		b.plans = append(b.plans, c.plan)
	}
}

// envelopeSDK names this exporter in the envelope header, as an SDK would.
type envelopeSDK struct {
	name, version string
}

// encodeEnvelope writes the envelope of a batch:
//
//	{"event_id":…,"sent_at":…,"dsn":…,"sdk":{…}}
//	{"type":"profile_chunk","length":N,"platform":…}
//	<chunk JSON>
func encodeEnvelope(b envelopeBatch, p *project, sdk envelopeSDK, now time.Time) []byte {
	h := envelope.Header{
		EventID: eventIDOf(b.chunks),
		DSN:     p.envelopeDSN,
		SentAt:  now.UTC().Format(time.RFC3339),
		SDK:     &envelope.SDK{Name: sdk.name, Version: sdk.version},
	}
	buf := make([]byte, 0, b.size+256*(len(b.chunks)+1))
	buf = append(h.AppendJSON(buf), '\n')
	for _, c := range b.chunks {
		buf = envelope.AppendItem(buf, envelope.ItemHeader{
			Type:     itemTypeProfileChunk,
			Length:   int64(len(c.payload)),
			Platform: c.platform,
		}, c.payload)
	}
	return buf
}

// eventIDOf is the envelope `event_id`: the chunk id when the envelope holds a
// single chunk (so Sentry's answer names the chunk), a fresh id otherwise.
func eventIDOf(chunks []encodedChunk) string {
	if len(chunks) == 1 && isHex32(chunks[0].chunkID) {
		return chunks[0].chunkID
	}
	return newEventID()
}

func newEventID() string {
	var id [16]byte
	// crypto/rand.Read never returns an error (Go 1.24+).
	_, _ = rand.Read(id[:])
	return hex.EncodeToString(id[:])
}

// isHex32 reports whether s is a Sentry id as written: 32 lower-case hex
// digits.
func isHex32(s string) bool {
	c, ok := sentry.CanonicalUUID(s)
	return ok && c == s
}
