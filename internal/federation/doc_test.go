package federation

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// lifeOfASubmission are the files the package doc says one submission's life can be
// followed in, in order.
var lifeOfASubmission = []string{
	"webhook/submit.go",
	"controllers/submission_controller.go",
	"internal/federation/verdict.go",
	"controllers/anchor.go",
	"controllers/crossanchor_controller.go",
	"internal/federation/receipt.go",
}

// TestLifeOfASubmissionFilesExist keeps the package doc's walk through one submission
// true: at most six files, each named in the doc, each there.
func TestLifeOfASubmissionFilesExist(t *testing.T) {
	if len(lifeOfASubmission) > 6 {
		t.Errorf("the life of a submission takes %d files, want at most 6", len(lifeOfASubmission))
	}
	doc, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	for i, f := range lifeOfASubmission {
		if !strings.Contains(string(doc), "//  "+string(rune('1'+i))+". "+f+":") {
			t.Errorf("doc.go does not name %s as step %d", f, i+1)
		}
		if _, err := os.Stat(filepath.Join("..", "..", filepath.FromSlash(f))); err != nil {
			t.Errorf("step %d: %v", i+1, err)
		}
	}
}
