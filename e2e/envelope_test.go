package e2e

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"testing"
	"time"
)

// The tests count what an SDK sent with this small parser of their own rather
// than with translator/envelope: the count is the oracle the pipeline's
// output is compared with, so it must not share code with the pipeline.

// envelopeItem is one item of a Sentry envelope.
type envelopeItem struct {
	Type    string
	Payload []byte
}

// parseEnvelope splits a decompressed envelope body into its items. An item
// header with `length` is followed by exactly that many bytes; one without
// runs to the next newline.
func parseEnvelope(body []byte) ([]envelopeItem, error) {
	_, rest, ok := bytes.Cut(body, []byte("\n"))
	if !ok {
		return nil, nil // header only
	}
	var items []envelopeItem
	for len(rest) > 0 {
		line, after, _ := bytes.Cut(rest, []byte("\n"))
		if len(bytes.TrimSpace(line)) == 0 {
			rest = after
			continue
		}
		var header struct {
			Type   string `json:"type"`
			Length *int   `json:"length"`
		}
		if err := json.Unmarshal(line, &header); err != nil {
			return items, fmt.Errorf("item %d header %q: %w", len(items), line, err)
		}
		var payload []byte
		if header.Length != nil {
			if *header.Length < 0 || *header.Length > len(after) {
				return items, fmt.Errorf("item %d (%s): length %d, %d bytes left", len(items), header.Type, *header.Length, len(after))
			}
			payload, rest = after[:*header.Length], after[*header.Length:]
			rest = bytes.TrimPrefix(rest, []byte("\n"))
		} else {
			payload, rest, _ = bytes.Cut(after, []byte("\n"))
		}
		items = append(items, envelopeItem{Type: header.Type, Payload: payload})
	}
	return items, nil
}

// sentSamples is what an SDK sent: how many profile chunks, and how many
// samples they held in all.
type sentSamples struct {
	Chunks  int
	Samples int
}

// countChunkSamples counts the profile_chunk items of an envelope and the
// elements of their profile.samples.
func countChunkSamples(body []byte) (sentSamples, error) {
	items, err := parseEnvelope(body)
	if err != nil {
		return sentSamples{}, err
	}
	var n sentSamples
	for i, it := range items {
		if it.Type != "profile_chunk" {
			continue
		}
		var chunk struct {
			Profile struct {
				Samples []json.RawMessage `json:"samples"`
			} `json:"profile"`
		}
		if err := json.Unmarshal(it.Payload, &chunk); err != nil {
			return n, fmt.Errorf("item %d: profile_chunk payload: %w", i, err)
		}
		n.Chunks++
		n.Samples += len(chunk.Profile.Samples)
	}
	return n, nil
}

// generatedChunk describes a V2 profile chunk written by newChunkEnvelope.
type generatedChunk struct {
	Function    string // name of the leaf frame of every stack
	Release     string
	Environment string
	Threads     map[string]string // thread id → name
	PerThread   int               // samples on each thread
}

// Samples is the number of samples the envelope carries.
func (c generatedChunk) Samples() int { return len(c.Threads) * c.PerThread }

// newChunkEnvelope writes the envelope a Python SDK would send for c: an
// empty envelope header, then one profile_chunk item with `length` and
// `platform` item headers. Samples alternate between two stacks so that the
// output has more than one stack per thread, and are 10 ms apart ending now.
func newChunkEnvelope(c generatedChunk) ([]byte, error) {
	if c.Function == "" || len(c.Threads) == 0 || c.PerThread < 2 {
		return nil, errors.New("generated chunk: a function, a thread and two samples per thread are needed")
	}
	type frame struct {
		Function string `json:"function"`
		Module   string `json:"module"`
		Filename string `json:"filename"`
		AbsPath  string `json:"abs_path"`
		Lineno   int    `json:"lineno"`
		InApp    bool   `json:"in_app"`
	}
	type sample struct {
		StackID   int         `json:"stack_id"`
		ThreadID  string      `json:"thread_id"`
		Timestamp json.Number `json:"timestamp"`
	}
	type threadMeta struct {
		Name string `json:"name"`
	}
	frames := []frame{
		{Function: c.Function, Module: "smoke.work", Filename: "smoke/work.py", AbsPath: "/srv/smoke/work.py", Lineno: 12, InApp: true},
		{Function: "handle", Module: "smoke.app", Filename: "smoke/app.py", AbsPath: "/srv/smoke/app.py", Lineno: 40, InApp: true},
		{Function: "run", Module: "threading", Filename: "threading.py", AbsPath: "/usr/lib/python3.12/threading.py", Lineno: 1010},
	}
	stacks := [][]int{{0, 1, 2}, {1, 2}}

	ids := make([]string, 0, len(c.Threads))
	meta := make(map[string]threadMeta, len(c.Threads))
	for id, name := range c.Threads {
		ids = append(ids, id)
		meta[id] = threadMeta{Name: name}
	}
	end := time.Now()
	var samples []sample
	for i := range c.PerThread {
		at := end.Add(-time.Duration(c.PerThread-1-i) * 10 * time.Millisecond)
		for _, id := range ids {
			samples = append(samples, sample{
				StackID:   i % len(stacks),
				ThreadID:  id,
				Timestamp: json.Number(strconv.FormatFloat(float64(at.UnixMicro())/1e6, 'f', 6, 64)),
			})
		}
	}
	chunk := map[string]any{
		"version":     "2",
		"chunk_id":    randomHex(),
		"profiler_id": randomHex(),
		"platform":    "python",
		"release":     c.Release,
		"environment": c.Environment,
		"client_sdk":  map[string]string{"name": "sentry.python", "version": "2.68.0"},
		"profile": map[string]any{
			"frames":          frames,
			"stacks":          stacks,
			"samples":         samples,
			"thread_metadata": meta,
		},
	}
	payload, err := json.Marshal(chunk)
	if err != nil {
		return nil, fmt.Errorf("generated chunk: %w", err)
	}
	itemHeader, err := json.Marshal(map[string]any{"type": "profile_chunk", "platform": "python", "length": len(payload)})
	if err != nil {
		return nil, fmt.Errorf("generated chunk: item header: %w", err)
	}
	var env bytes.Buffer
	env.WriteString("{}\n")
	env.Write(itemHeader)
	env.WriteByte('\n')
	env.Write(payload)
	env.WriteByte('\n')
	return env.Bytes(), nil
}

func randomHex() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails since Go 1.24
	return hex.EncodeToString(b[:])
}

// TestCountChunkSamples checks the oracle itself on the three envelope shapes
// SDKs send: `length` headers (Python), none (Node), and a generated one.
func TestCountChunkSamples(t *testing.T) {
	generated, err := newChunkEnvelope(generatedChunk{
		Function: "f", Threads: map[string]string{"1": "main", "2": "io"}, PerThread: 3,
	})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		body    string
		want    sentSamples
		wantErr bool
	}{
		{
			name: "generated with length headers",
			body: string(generated),
			want: sentSamples{Chunks: 1, Samples: 6},
		},
		{
			name: "no length headers, other items around the chunk",
			body: "{\"event_id\":\"9ec79c33ec9942ab8353589fcb2e04dc\"}\n" +
				"{\"type\":\"client_report\"}\n{\"discarded_events\":[]}\n" +
				"{\"type\":\"profile_chunk\",\"platform\":\"node\"}\n" +
				"{\"profile\":{\"samples\":[{\"stack_id\":0},{\"stack_id\":0},{\"stack_id\":1}]}}\n" +
				"{\"type\":\"profile_chunk\",\"platform\":\"node\"}\n" +
				"{\"profile\":{\"samples\":[{\"stack_id\":0}]}}",
			want: sentSamples{Chunks: 2, Samples: 4},
		},
		{
			name: "length covering a newline inside the payload",
			body: "{}\n{\"type\":\"profile_chunk\",\"length\":35}\n{\"profile\":{\"samples\":[{},\n{},{}]}}\n",
			want: sentSamples{Chunks: 1, Samples: 3},
		},
		{
			name: "header only",
			body: "{}",
			want: sentSamples{},
		},
		{
			name:    "length past the end",
			body:    "{}\n{\"type\":\"profile_chunk\",\"length\":500}\n{}\n",
			wantErr: true,
		},
		{
			name:    "chunk payload that is not JSON",
			body:    "{}\n{\"type\":\"profile_chunk\"}\nnot json\n",
			wantErr: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := countChunkSamples([]byte(tt.body))
			if tt.wantErr {
				if err == nil {
					t.Fatalf("want an error, got %+v", got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Fatalf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

// sentProfile is one profile item an SDK sent, as read by readProfileItems:
// a V1 `profile` (samples with elapsed_since_start_ns) or a V2
// `profile_chunk` (samples with timestamps). Both keep samples, stacks,
// frames and thread_metadata under `profile`.
type sentProfile struct {
	Type        string            // profile or profile_chunk
	Samples     int               // elements of profile.samples
	ThreadIDs   map[string]int    // samples per thread_id, numbers and strings alike
	ThreadNames map[string]string // profile.thread_metadata: thread id → name
	Release     string
	Environment string
}

// sentItems is what the envelopes of one SDK run carried.
type sentItems struct {
	Profiles []sentProfile
	Items    map[string]int // items per type, profiles included
}

// Samples adds up the samples of every profile item.
func (s sentItems) Samples() int {
	n := 0
	for _, p := range s.Profiles {
		n += p.Samples
	}
	return n
}

// Threads returns the sampled threads of every profile item, each with the
// name its thread_metadata gives it ("" when it names none).
func (s sentItems) Threads() map[string]string {
	out := map[string]string{}
	for _, p := range s.Profiles {
		for id := range p.ThreadIDs {
			if _, ok := out[id]; !ok || out[id] == "" {
				out[id] = p.ThreadNames[id]
			}
		}
	}
	return out
}

// readProfileItems reads the profile and profile_chunk items of an envelope
// and counts every item by type into into.Items.
func readProfileItems(body []byte, into *sentItems) error {
	items, err := parseEnvelope(body)
	if err != nil {
		return err
	}
	if into.Items == nil {
		into.Items = map[string]int{}
	}
	for i, it := range items {
		into.Items[it.Type]++
		if it.Type != "profile" && it.Type != "profile_chunk" {
			continue
		}
		var payload struct {
			Release     string `json:"release"`
			Environment string `json:"environment"`
			Profile     struct {
				Samples []struct {
					ThreadID json.RawMessage `json:"thread_id"`
				} `json:"samples"`
				ThreadMetadata map[string]struct {
					Name string `json:"name"`
				} `json:"thread_metadata"`
			} `json:"profile"`
		}
		if err := json.Unmarshal(it.Payload, &payload); err != nil {
			return fmt.Errorf("item %d: %s payload: %w", i, it.Type, err)
		}
		p := sentProfile{
			Type: it.Type, Samples: len(payload.Profile.Samples),
			ThreadIDs: map[string]int{}, ThreadNames: map[string]string{},
			Release: payload.Release, Environment: payload.Environment,
		}
		for j, s := range payload.Profile.Samples {
			id, err := threadID(s.ThreadID)
			if err != nil {
				return fmt.Errorf("item %d: %s sample %d: %w", i, it.Type, j, err)
			}
			p.ThreadIDs[id]++
		}
		for id, m := range payload.Profile.ThreadMetadata {
			p.ThreadNames[id] = m.Name
		}
		into.Profiles = append(into.Profiles, p)
	}
	return nil
}

// threadID renders a sample's thread_id, which SDKs send as a string
// (Node, Python) or a number (Go), as the decimal text both mean.
func threadID(raw json.RawMessage) (string, error) {
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s, nil
	}
	var n json.Number
	if err := json.Unmarshal(raw, &n); err != nil {
		return "", fmt.Errorf("thread_id %s is neither a string nor a number", raw)
	}
	return n.String(), nil
}

// TestReadProfileItems checks the V1 and V2 side of the oracle on the shapes
// real SDKs send.
func TestReadProfileItems(t *testing.T) {
	tests := []struct {
		name        string
		body        string
		wantSamples int
		wantItems   map[string]int
		wantThreads map[string]string
		wantErr     bool
	}{
		{
			name: "V1 profile beside its transaction, numeric thread ids (sentry-go)",
			body: "{\"event_id\":\"9ec79c33ec9942ab8353589fcb2e04dc\"}\n" +
				"{\"type\":\"transaction\",\"length\":2}\n{}\n" +
				"{\"type\":\"profile\"}\n" +
				"{\"release\":\"r@1\",\"environment\":\"e\",\"profile\":{\"samples\":[{\"thread_id\":1},{\"thread_id\":7},{\"thread_id\":1}]," +
				"\"thread_metadata\":{\"1\":{\"name\":\"Goroutine 1\"}}}}\n",
			wantSamples: 3,
			wantItems:   map[string]int{"transaction": 1, "profile": 1},
			wantThreads: map[string]string{"1": "Goroutine 1", "7": ""},
		},
		{
			name: "V2 chunks, string thread ids (Node)",
			body: "{}\n{\"type\":\"profile_chunk\",\"platform\":\"node\"}\n" +
				"{\"profile\":{\"samples\":[{\"thread_id\":\"0\"},{\"thread_id\":\"0\"}],\"thread_metadata\":{\"0\":{\"name\":\"main\"}}}}\n" +
				"{\"type\":\"span\"}\n{}\n",
			wantSamples: 2,
			wantItems:   map[string]int{"profile_chunk": 1, "span": 1},
			wantThreads: map[string]string{"0": "main"},
		},
		{
			name:    "thread id that is an object",
			body:    "{}\n{\"type\":\"profile\"}\n{\"profile\":{\"samples\":[{\"thread_id\":{}}]}}\n",
			wantErr: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got sentItems
			err := readProfileItems([]byte(tt.body), &got)
			if tt.wantErr {
				if err == nil {
					t.Fatalf("want an error, got %+v", got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Samples() != tt.wantSamples {
				t.Errorf("samples: got %d, want %d", got.Samples(), tt.wantSamples)
			}
			if fmt.Sprint(got.Items) != fmt.Sprint(tt.wantItems) {
				t.Errorf("items: got %v, want %v", got.Items, tt.wantItems)
			}
			if fmt.Sprint(got.Threads()) != fmt.Sprint(tt.wantThreads) {
				t.Errorf("threads: got %v, want %v", got.Threads(), tt.wantThreads)
			}
		})
	}
}
