package webhook

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestErrorMessagesAreNotHTMLEscaped checks that a message meant to be read keeps "<",
// ">" and "&" as they are rather than as \u003c, \u003e and \u0026.
func TestErrorMessagesAreNotHTMLEscaped(t *testing.T) {
	rec := httptest.NewRecorder()
	writeError(rec, &apiError{status: http.StatusBadRequest, code: "invalid_field", message: "org_name <x> & more"})
	body := rec.Body.String()
	if strings.Contains(body, `\u003c`) || strings.Contains(body, `\u0026`) || !strings.Contains(body, "org_name <x> & more") {
		t.Errorf("body %s: the message is HTML-escaped", body)
	}
	var e errorBody
	if err := json.Unmarshal(bytes.TrimSpace(rec.Body.Bytes()), &e); err != nil || e.Error != "invalid_field" || e.Message != "org_name <x> & more" {
		t.Errorf("body %s decodes to %+v (%v)", body, e, err)
	}
}
