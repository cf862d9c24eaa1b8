package api

import (
	"errors"
	"net/http"

	"github.com/cairn-dev/cairn/internal/analysis"
)

// analysisRoutes is the energy group (routes_energy.go); regression has a group of its
// own (routes_regression.go).
func (s *Server) analysisRoutes(c *components) group {
	return group{name: "analysis", description: "The energy and CO2 of the calls.", routes: s.energyRoutes(c)}
}

// analysisError answers an error of internal/analysis: 400 for bad input
// (analysis.ErrInvalidInput), else 500.
func (s *Server) analysisError(w http.ResponseWriter, r *http.Request, what string, err error) {
	if errors.Is(err, analysis.ErrInvalidInput) {
		writeError(w, http.StatusBadRequest, codeBadParameter, err.Error())
		return
	}
	s.internalError(w, r, what, err)
}
