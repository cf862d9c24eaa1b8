package federation

import (
	"errors"
	"fmt"
	"io"
	"mime"
	"os"
	"path/filepath"
	"strings"

	"github.com/cairn-dev/cairn/internal/cli/cmdutil"
	"github.com/cairn-dev/cairn/pkg/client"
	"github.com/cairn-dev/cairn/pkg/sidecar"
)

// sidecarTypes are the media types guessed for extensions the system table may lack.
var sidecarTypes = map[string]string{
	".json":   "application/json",
	".jsonl":  "application/jsonl",
	".md":     "text/markdown",
	".txt":    "text/plain",
	".pdf":    "application/pdf",
	".intoto": "application/vnd.in-toto+json",
	".dsse":   "application/vnd.dsse.envelope.v1+json",
	".yaml":   "application/yaml",
	".yml":    "application/yaml",
	".csv":    "text/csv",
}

// readSidecarFlags reads each --sidecar FILE[:media/type]: a suffix after the last ':'
// that holds a '/' is the media type; without one it is guessed from the extension.
func readSidecarFlags(flags []string) ([]client.Sidecar, error) {
	if len(flags) > sidecar.MaxCount {
		return nil, cmdutil.UsageError{Err: fmt.Errorf("--sidecar is given %d times: at most %d", len(flags), sidecar.MaxCount)}
	}
	out := make([]client.Sidecar, 0, len(flags))
	for _, flag := range flags {
		path, mediaType := flag, ""
		if i := strings.LastIndexByte(flag, ':'); i > 0 && strings.Contains(flag[i+1:], "/") {
			path, mediaType = flag[:i], flag[i+1:]
		}
		if mediaType == "" {
			mediaType = guessMediaType(path)
		}
		mt, err := sidecar.CheckMediaType(mediaType)
		if err != nil {
			return nil, cmdutil.UsageError{Err: fmt.Errorf("--sidecar %s: %w", flag, err)}
		}
		content, err := readSidecarFile(path)
		if err != nil {
			return nil, err
		}
		out = append(out, client.Sidecar{MediaType: mt, Name: filepath.Base(path), Content: content})
	}
	return out, nil
}

// guessMediaType is the media type of path's extension, or application/octet-stream.
func guessMediaType(path string) string {
	ext := strings.ToLower(filepath.Ext(path))
	if mt, ok := sidecarTypes[ext]; ok {
		return mt
	}
	if mt := mime.TypeByExtension(ext); mt != "" {
		return mt
	}
	return sidecar.DefaultMediaType
}

// readSidecarFile reads path, refusing one over sidecar.MaxBytes without reading it all.
func readSidecarFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("--sidecar: %w", err)
	}
	defer func() { _ = f.Close() }()
	content, err := io.ReadAll(io.LimitReader(f, sidecar.MaxBytes+1))
	if err != nil {
		return nil, fmt.Errorf("--sidecar %s: %w", path, err)
	}
	if len(content) > sidecar.MaxBytes {
		return nil, cmdutil.UsageError{Err: errors.New("--sidecar " + path + ": over 1 MiB (1048576 bytes)")}
	}
	return content, nil
}
