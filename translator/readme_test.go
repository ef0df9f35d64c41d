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
