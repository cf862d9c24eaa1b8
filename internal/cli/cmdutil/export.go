package cmdutil

import (
	"bufio"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/cairn-dev/cairn/internal/store"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

// WriteExportFile streams the export to path through a temporary file that is renamed
// into place when complete, or to standard output for "-".
func WriteExportFile(cmd *cobra.Command, s *store.Store, path string, o store.ExportOptions) (*protocol.ExportHeader, error) {
	if path == "-" {
		w := bufio.NewWriter(cmd.OutOrStdout())
		h, err := s.Export(cmd.Context(), w, o)
		if err != nil {
			return nil, err
		}
		return h, w.Flush()
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".cairn-export-*")
	if err != nil {
		return nil, err
	}
	defer func() { _ = os.Remove(tmp.Name()) }() // a no-op once renamed
	h, err := s.Export(cmd.Context(), tmp, o)
	if err == nil {
		err = tmp.Sync()
	}
	if closeErr := tmp.Close(); err == nil {
		err = closeErr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		return nil, err
	}
	return h, nil
}
