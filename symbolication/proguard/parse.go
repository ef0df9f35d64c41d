package proguard

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unsafe"
)

// maxLineBytes bounds one line of a mapping file. R8 writes long lines only
// for metadata comments (outline call sites list positions); a megabyte is
// far above anything seen and keeps a hostile file from growing a line
// buffer without bound.
const maxLineBytes = 1 << 20

// Parse reads a ProGuard or R8 mapping file.
//
// Lines that are not a class, member or metadata record (free-form `#`
// comments, blank lines) are ignored, as are fields. A line that looks like
// a class or member but cannot be read is skipped and counted in
// SkippedLines, as retrace tools do, so one odd line does not lose a whole
// release's mapping; a non-empty input with no class at all is an error.
//
// Parse holds the whole mapping in memory: bound r (io.LimitReader) when
// the input is not trusted.
func Parse(r io.Reader) (*Mapping, error) {
	p := newParser()
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), maxLineBytes)
	for sc.Scan() {
		p.line++
		// The line aliases the scanner's buffer: everything the mapping
		// keeps goes through intern, which copies.
		line := sc.Bytes()
		p.parseLine(unsafe.String(unsafe.SliceData(line), len(line)))
	}
	if err := sc.Err(); err != nil {
		return nil, p.readError(err)
	}
	if len(p.m.classes) == 0 && p.sawContent {
		return nil, fmt.Errorf("proguard: no class mapping in %d lines (first unreadable line %d)", p.line, p.firstBad)
	}
	p.m.finish()
	return p.m, nil
}

// readError says why the mapping could not be read.
func (p *parser) readError(err error) error {
	if errors.Is(err, bufio.ErrTooLong) {
		return fmt.Errorf("proguard: line %d longer than %d bytes", p.line+1, maxLineBytes)
	}
	return fmt.Errorf("proguard: reading mapping: %w", err)
}

// parser holds the state of one Parse: the class that member lines belong
// to, the member a following metadata comment refers to, and the strings
// interned so far.
type parser struct {
	m          *Mapping
	line       int
	firstBad   int
	sawContent bool
	class      *class // class of the member lines that follow
	lastMember *member
	strings    map[string]string
}

func newParser() *parser {
	return &parser{
		m:       &Mapping{classes: map[string]*class{}, files: map[string]string{}},
		strings: map[string]string{},
	}
}

// intern returns one shared copy of s, so that the thousands of repeated
// class names and types of a mapping are stored once.
func (p *parser) intern(s string) string {
	if v, ok := p.strings[s]; ok {
		return v
	}
	s = strings.Clone(s)
	p.strings[s] = s
	p.m.stringBytes += int64(len(s))
	return s
}

func (p *parser) parseLine(raw string) {
	line := strings.TrimRight(raw, "\r")
	trimmed := strings.TrimSpace(line)
	switch {
	case trimmed == "":
		return
	case strings.HasPrefix(trimmed, "#"):
		p.parseComment(strings.TrimSpace(trimmed[1:]))
		return
	}
	p.sawContent = true
	if !p.parseRecord(line, trimmed) {
		p.skip()
	}
}

// parseRecord reads a class line, or an indented member line.
func (p *parser) parseRecord(line, trimmed string) bool {
	if line[0] == ' ' || line[0] == '\t' {
		return p.parseMember(trimmed)
	}
	return p.parseClass(trimmed)
}

// skip counts a line that could not be read.
func (p *parser) skip() {
	p.m.skipped++
	if p.firstBad == 0 {
		p.firstBad = p.line
	}
}

// parseClass reads `original.Name -> obfuscated.Name:`.
func (p *parser) parseClass(s string) bool {
	orig, obf, ok := strings.Cut(s, " -> ")
	obf, isClass := strings.CutSuffix(obf, ":")
	if !ok || !isClass || !isClassName(orig) || !isClassName(obf) {
		p.class = nil
		return false
	}
	c := &class{original: p.intern(orig), methods: map[string][]member{}}
	p.m.classes[p.intern(obf)] = c
	p.class = c
	p.lastMember = nil
	return true
}

// isClassName: a name without spaces.
func isClassName(s string) bool { return s != "" && !strings.Contains(s, " ") }

// parseMember reads a field (`type name -> obf`, ignored) or a method:
// `[start:end:]type [origClass.]name(args)[:origStart[:origEnd]] -> obf`.
func (p *parser) parseMember(s string) bool {
	p.lastMember = nil
	if p.class == nil {
		return false
	}
	decl, obf, ok := strings.Cut(s, " -> ")
	if !ok || obf == "" || strings.Contains(obf, " ") {
		return false
	}
	open := strings.IndexByte(decl, '(')
	if open < 0 {
		return true // a field: profiles never name fields
	}
	m, ok := parseMethodDecl(decl, open)
	if !ok {
		return false
	}
	p.addMethod(m, obf)
	return true
}

// addMethod adds a method line to the class being read, under its
// obfuscated name.
func (p *parser) addMethod(m member, obf string) {
	m.name = p.intern(m.name)
	m.class = p.originOf(m)
	obf = p.intern(obf)
	members := append(p.class.methods[obf], m)
	p.class.methods[obf] = members
	p.lastMember = &members[len(members)-1]
	p.m.members++
}

// originOf is the class a method line's code came from: the one it names
// (code inlined from another class), else the class being read.
func (p *parser) originOf(m member) string {
	if m.class == "" {
		return p.class.original
	}
	return p.intern(m.class)
}

// parseMethodDecl reads the part of a method line before ` -> `; open is
// the index of its `(`.
func parseMethodDecl(decl string, open int) (member, bool) {
	var m member
	closeIdx := strings.LastIndexByte(decl, ')')
	if closeIdx < open {
		return m, false
	}
	head, ok := parseMinifiedRange(&m, decl[:open])
	if !ok || !parseQualifiedName(&m, head) {
		return m, false
	}
	return m, parseOriginalLines(&m, decl[closeIdx+1:])
}

// parseMinifiedRange reads the `start:end:` before a method's return
// type, when there is one, and returns the rest.
func parseMinifiedRange(m *member, head string) (string, bool) {
	if head == "" || head[0] < '0' || head[0] > '9' {
		return head, true
	}
	first, rest, ok1 := strings.Cut(head, ":")
	second, rest, ok2 := strings.Cut(rest, ":")
	start, end, ok := parseRange(first, second)
	if !ok1 || !ok2 || !ok {
		return "", false
	}
	m.start, m.end, m.hasRange = start, end, true
	return rest, true
}

// parseRange reads the two line numbers of a range, in order.
func parseRange(first, second string) (start, end int32, ok bool) {
	start, err1 := parseLineNumber(first)
	end, err2 := parseLineNumber(second)
	return start, end, err1 == nil && err2 == nil && start <= end
}

// parseQualifiedName reads `type [origClass.]name`, dropping the return
// type.
func parseQualifiedName(m *member, head string) bool {
	_, qualified, ok := strings.Cut(head, " ")
	if !ok || qualified == "" || strings.Contains(qualified, " ") {
		return false
	}
	if dot := strings.LastIndexByte(qualified, '.'); dot >= 0 {
		m.class, m.name = qualified[:dot], qualified[dot+1:]
	} else {
		m.name = qualified
	}
	return m.name != ""
}

// parseOriginalLines reads the `:origStart[:origEnd]` suffix of a method.
func parseOriginalLines(m *member, tail string) bool {
	if tail == "" {
		return true
	}
	lines, ok := strings.CutPrefix(tail, ":")
	if !ok {
		return false
	}
	first, second, hasSecond := strings.Cut(lines, ":")
	if !hasSecond {
		second = first
	}
	start, err1 := parseLineNumber(first)
	end, err2 := parseLineNumber(second)
	m.origStart, m.origEnd, m.hasOriginal = start, end, true
	return err1 == nil && err2 == nil
}

func parseLineNumber(s string) (int32, error) {
	n, err := strconv.ParseInt(s, 10, 32)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("bad line number %q", s)
	}
	return int32(n), nil
}

// r8Metadata is the JSON object R8 writes in `# {...}` comments after a
// class or member line.
type r8Metadata struct {
	ID        string         `json:"id"`
	FileName  string         `json:"fileName"`
	Positions map[string]int `json:"positions"`
}

// parseComment reads R8's `# {"id":...}` metadata; other comments
// (`# compiler: R8`, `# pg_map_hash: ...`) carry nothing a frame needs.
func (p *parser) parseComment(s string) {
	if !strings.HasPrefix(s, "{") {
		return
	}
	var md r8Metadata
	if json.Unmarshal([]byte(s), &md) == nil {
		p.applyMetadata(md)
	}
}

// applyMetadata records what a metadata comment says of the class or
// member line before it.
func (p *parser) applyMetadata(md r8Metadata) {
	switch {
	case md.ID == "sourceFile":
		p.setSourceFile(md.FileName)
	case p.lastMember == nil:
	case md.ID == "com.android.tools.r8.outline":
		p.lastMember.outline = true
	case md.ID == "com.android.tools.r8.outlineCallsite":
		p.lastMember.outlineCallsite = parsePositions(md.Positions)
	}
}

// setSourceFile records the source file of the class line just read
// (before any member: a member's metadata names no file).
func (p *parser) setSourceFile(name string) {
	if p.class != nil && p.lastMember == nil && name != "" {
		p.m.files[p.class.original] = p.intern(name)
	}
}

// parsePositions turns an outline call site's {"outlinePos": callsiteLine}
// into a map; entries that are not line numbers are dropped.
func parsePositions(raw map[string]int) map[int32]int32 {
	if len(raw) == 0 {
		return nil
	}
	out := make(map[int32]int32, len(raw))
	for k, v := range raw {
		if n, err := parseLineNumber(k); err == nil && fitsLine(v) {
			out[n] = int32(v)
		}
	}
	return out
}

// fitsLine reports whether v is a line number a mapping can hold.
func fitsLine(v int) bool { return v >= 0 && v <= 1<<31-1 }
