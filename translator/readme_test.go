package translator

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestReadmeNamesEverySentryField keeps the mapping document complete: every
// Sentry JSON field the model decodes (the quoted names in the field
// comments of translator/sentry/profile.go) appears in translator/README.md
// as code, alone or as the last part of a dotted path.
func TestReadmeNamesEverySentryField(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	file, err := parser.ParseFile(fset, "sentry/profile.go", nil, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	quoted := regexp.MustCompile(`"([a-z_][a-z0-9_.]*)"`)
	var fields []string
	ast.Inspect(file, func(n ast.Node) bool {
		st, ok := n.(*ast.StructType)
		if !ok {
			return true
		}
		for _, f := range st.Fields.List {
			for _, c := range []*ast.CommentGroup{f.Doc, f.Comment} {
				if c == nil {
					continue
				}
				// The JSON name is the first quoted name of the comment;
				// later ones are values or aliases.
				if m := quoted.FindStringSubmatch(c.Text()); m != nil {
					fields = append(fields, m[1])
					break
				}
			}
		}
		return true
	})
	if len(fields) < 30 {
		t.Fatalf("found only %d field names in sentry/profile.go; the comment convention changed?", len(fields))
	}
	text := string(readme)
	for _, name := range fields {
		last := name[strings.LastIndex(name, ".")+1:]
		named := regexp.MustCompile("`\\.?([a-z_<>]+[.\\[\\]]*)*" + regexp.QuoteMeta(last) + "([\\[\\]. ]|`)")
		if !named.MatchString(text) {
			t.Errorf("translator/README.md does not name the Sentry field %q", name)
		}
	}
}

// TestReadmeRowsNameTheirFile keeps the promise of the mapping document:
// every row of the Sentry field tables names the file that maps it (its
// Code column, else the section title), the file exists, and searching it
// for the quoted field name lands on the code that maps it.
func TestReadmeRowsNameTheirFile(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	goFile := regexp.MustCompile(`[a-z_/]+\.go`)
	field := regexp.MustCompile("`([a-z_.<>\\[\\]]+)`")
	sources := map[string]string{}
	source := func(name string) string {
		if s, ok := sources[name]; ok {
			return s
		}
		b, err := os.ReadFile(name)
		if err != nil {
			t.Errorf("translator/README.md names %s, which does not exist", name)
		}
		sources[name] = string(b)
		return sources[name]
	}
	// The tables whose first column is a Sentry JSON field.
	tables := map[string]bool{"Top-level fields": true, "Samples": true, "Frames": true, "debug_meta images": true}
	var section []string // files of the current section title
	checked, inTable, fieldTable := 0, false, false
	for line := range strings.Lines(string(readme)) {
		line = strings.TrimSpace(line)
		if title, ok := strings.CutPrefix(line, "## "); ok {
			inTable = false
			for prefix := range tables {
				if strings.HasPrefix(title, prefix) {
					inTable = true
				}
			}
			section = goFile.FindAllString(title, -1)
			for _, f := range section {
				source(f)
			}
			continue
		}
		if strings.HasPrefix(line, "| Sentry") {
			// A table header: the field tables' first column is JSON.
			fieldTable = strings.Contains(line, "JSON")
			continue
		}
		if !inTable || !fieldTable || !strings.HasPrefix(line, "| `") {
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), " | ")
		files := section
		if len(section) == 0 {
			last := strings.TrimSpace(cells[len(cells)-1])
			if last == "—" {
				continue // not mapped: the row says why
			}
			files = goFile.FindAllString(last, -1)
		}
		if len(files) == 0 {
			t.Errorf("README row names no file: %s", line)
			continue
		}
		for _, m := range field.FindAllStringSubmatch(cells[0], -1) {
			path := strings.TrimSuffix(m[1], "[]")
			name := path[strings.LastIndex(path, ".")+1:]
			name = strings.TrimSuffix(name, "[]")
			found := false
			for _, f := range files {
				found = found || strings.Contains(source(f), `"`+name+`"`)
			}
			if !found {
				t.Errorf("README maps %q in %v, where %q does not appear", m[1], files, `"`+name+`"`)
			}
			checked++
		}
	}
	if checked < 50 {
		t.Fatalf("checked only %d fields; the README's table layout changed?", checked)
	}
}
