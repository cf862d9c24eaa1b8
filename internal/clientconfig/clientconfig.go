// Package clientconfig keeps the federation client's state on disk, in the user's
// configuration directory (cairn federation's --config-dir, by default
// $XDG_CONFIG_HOME/cairn):
//
//	federation.json                  {"service": URL}: the federation commands use by default
//	federations/<host>/operator.json this machine's operator there: its ID, organization and
//	                                 the path of its private key (the key itself is never copied)
//	federations/<host>/federation.pem the federation public key pinned at registration
//	federations/<host>/log.pem        the transparency log key pinned at registration
//
// Pins work as ssh's known hosts: the first contact with a federation (its registration,
// cairn federation trust, or any command under TrustOnFirstUse) trusts the keys it
// presents; later answers signed by another key are refused until the user says to trust
// the new one. Dir.Trust decides, before a command sends anything else. Files are written whole (a temporary file renamed into place) and
// readable by the user alone.
package clientconfig

import (
	"crypto"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/cairn-dev/cairn/internal/atomicfile"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

// File names inside the configuration directory.
const (
	defaultFile       = "federation.json"
	federationsDir    = "federations"
	operatorFile      = "operator.json"
	federationKeyFile = "federation.pem"
	logKeyFile        = "log.pem"
)

// Dir is a client configuration directory.
type Dir string

// Operator is this machine's identity at one federation.
type Operator struct {
	// Service is the federation's base URL.
	Service string `json:"service"`
	// OperatorID is the ID the federation registered; it survives key rotations.
	OperatorID string `json:"operator_id"`
	// OrgName is the organization registered.
	OrgName string `json:"org_name,omitempty"`
	// PrivateKey is the absolute path of the operator's current private key (PEM).
	PrivateKey string `json:"private_key"`
	// RegisteredAt is when the federation registered the operator (RFC 3339).
	RegisteredAt string `json:"registered_at,omitempty"`
}

// Pins are the keys pinned for one federation.
type Pins struct {
	// FederationKey is the federation's public key and FederationKeyPEM its PEM text.
	FederationKey    ed25519.PublicKey
	FederationKeyPEM []byte
	// LogKey is the transparency log's key and LogKeyPEM its PEM text; nil when the
	// federation named no log key at registration.
	LogKey    crypto.PublicKey
	LogKeyPEM []byte
}

// ErrKeyChanged means a federation presented a key other than the one pinned.
var ErrKeyChanged = errors.New("federation key changed")

// KeyChangedError says which pinned key a federation no longer presents.
type KeyChangedError struct {
	// Which is "federation" or "log".
	Which string
	// Host is the federation's directory name, and Service its URL as given.
	Host, Service string
	// Pinned and Presented name the keys: the fingerprint of a federation key
	// (protocol.Fingerprint), the log ID of a log key (protocol.LogID), "none" for none.
	Pinned, Presented string
}

func (e *KeyChangedError) Error() string {
	pinned, presented := e.Pinned, e.Presented
	if e.Which == "federation" {
		pinned, presented = "sha256:"+pinned, "sha256:"+presented
	}
	return fmt.Sprintf("%s key of %s changed: pinned %s, now presented %s; if the federation rotated its key, compare the new "+
		"key with the one its administrators publish and pin it with: cairn federation trust --service %s",
		e.Which, e.Host, pinned, presented, e.Service)
}

// Unwrap makes a KeyChangedError an ErrKeyChanged.
func (e *KeyChangedError) Unwrap() error { return ErrKeyChanged }

// hostPattern is what a federation's directory name may hold.
var hostPattern = regexp.MustCompile(`^[a-z0-9._:\[\]%-]+$`)

// HostOf returns the directory name of the federation at service: its host and port,
// lower-cased, and the base path's segments after "_" when it has one.
func HostOf(service string) (string, error) {
	u, err := url.Parse(service)
	if err != nil {
		return "", fmt.Errorf("service URL: %w", err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("service URL %q is not an absolute http or https URL", service)
	}
	name := strings.ToLower(u.Host)
	if p := strings.Trim(u.Path, "/"); p != "" {
		name += "_" + strings.ReplaceAll(strings.ToLower(p), "/", "_")
	}
	if !hostPattern.MatchString(name) || name == "." || name == ".." || strings.Contains(name, "..") {
		return "", fmt.Errorf("service URL %q: %q cannot name a directory", service, name)
	}
	return name, nil
}

// FederationDir is the directory of the federation at service.
func (d Dir) FederationDir(service string) (string, error) {
	dir, _, err := d.federationDir(service)
	return dir, err
}

// federationDir is the directory of the federation at service, and its name.
func (d Dir) federationDir(service string) (string, string, error) {
	host, err := HostOf(service)
	if err != nil {
		return "", "", err
	}
	return filepath.Join(string(d), federationsDir, host), host, nil
}

// DefaultService returns the federation the commands use when none is named, "" if none
// was set.
func (d Dir) DefaultService() (string, error) {
	var v struct {
		Service string `json:"service"`
	}
	found, err := readJSON(filepath.Join(string(d), defaultFile), &v)
	if err != nil || !found {
		return "", err
	}
	return v.Service, nil
}

// SetDefaultService makes service the federation the commands use when none is named.
func (d Dir) SetDefaultService(service string) error {
	if _, err := HostOf(service); err != nil {
		return err
	}
	return writeJSON(filepath.Join(string(d), defaultFile), map[string]string{"service": service})
}

// Operator returns this machine's operator at service, nil if none is recorded.
func (d Dir) Operator(service string) (*Operator, error) {
	dir, _, err := d.federationDir(service)
	if err != nil {
		return nil, err
	}
	var op Operator
	found, err := readJSON(filepath.Join(dir, operatorFile), &op)
	if err != nil || !found {
		return nil, err
	}
	return &op, nil
}

// SaveOperator records op as this machine's operator at op.Service. A relative key path
// is made absolute, so the record works from any directory.
func (d Dir) SaveOperator(op *Operator) error {
	dir, _, err := d.federationDir(op.Service)
	if err != nil {
		return err
	}
	rec := *op
	if rec.PrivateKey, err = filepath.Abs(rec.PrivateKey); err != nil {
		return err
	}
	return writeJSON(filepath.Join(dir, operatorFile), &rec)
}

// Pins returns the keys pinned for service, nil if none are.
func (d Dir) Pins(service string) (*Pins, error) {
	dir, _, err := d.federationDir(service)
	if err != nil {
		return nil, err
	}
	fedPEM, err := os.ReadFile(filepath.Join(dir, federationKeyFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	p := &Pins{FederationKeyPEM: fedPEM}
	if p.FederationKey, err = protocol.ParsePublicKeyPEM(fedPEM); err != nil {
		return nil, fmt.Errorf("pinned federation key %s: %w", filepath.Join(dir, federationKeyFile), err)
	}
	logPEM, err := os.ReadFile(filepath.Join(dir, logKeyFile))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return p, nil
	case err != nil:
		return nil, err
	}
	p.LogKeyPEM = logPEM
	if p.LogKey, err = protocol.ParseLogPublicKeyPEM(logPEM); err != nil {
		return nil, fmt.Errorf("pinned log key %s: %w", filepath.Join(dir, logKeyFile), err)
	}
	return p, nil
}

// Presented are the keys a federation presents (GET /federation/status).
type Presented struct {
	// FederationKeyPEM is the federation's public key; required.
	FederationKeyPEM []byte
	// LogKeyPEM is the log's key; empty when the federation names none.
	LogKeyPEM []byte
}

// CheckPins compares what the federation at service presents with its pins. It returns
// the pins (nil when none are recorded) and a *KeyChangedError when a pinned key differs
// or a pinned log key is no longer presented. Keys are compared as keys, not as text.
func (d Dir) CheckPins(service string, got Presented) (*Pins, error) {
	pins, err := d.Pins(service)
	if err != nil || pins == nil {
		return pins, err
	}
	_, host, _ := d.federationDir(service)
	fedKey, err := protocol.ParsePublicKeyPEM(got.FederationKeyPEM)
	if err != nil {
		return nil, fmt.Errorf("the federation's public key: %w", err)
	}
	if !fedKey.Equal(pins.FederationKey) {
		return pins, &KeyChangedError{Which: "federation", Host: host, Service: service,
			Pinned: protocol.Fingerprint(pins.FederationKey), Presented: protocol.Fingerprint(fedKey)}
	}
	if pins.LogKey == nil {
		return pins, nil
	}
	pinnedID, _ := protocol.LogID(pins.LogKey)
	presentedID := "none"
	if len(got.LogKeyPEM) > 0 {
		logKey, err := protocol.ParseLogPublicKeyPEM(got.LogKeyPEM)
		if err != nil {
			return nil, fmt.Errorf("the federation's log key: %w", err)
		}
		presentedID, _ = protocol.LogID(logKey)
	}
	if presentedID != pinnedID {
		return pins, &KeyChangedError{Which: "log", Host: host, Service: service, Pinned: pinnedID, Presented: presentedID}
	}
	return pins, nil
}

// SavePins pins the keys the federation at service presents, replacing earlier pins.
// Both are parsed first: nothing is pinned that is not a key.
func (d Dir) SavePins(service string, got Presented) error {
	dir, _, err := d.federationDir(service)
	if err != nil {
		return err
	}
	if _, err := protocol.ParsePublicKeyPEM(got.FederationKeyPEM); err != nil {
		return fmt.Errorf("the federation's public key: %w", err)
	}
	if len(got.LogKeyPEM) > 0 {
		if _, err := protocol.ParseLogPublicKeyPEM(got.LogKeyPEM); err != nil {
			return fmt.Errorf("the federation's log key: %w", err)
		}
		if err := atomicfile.Write(filepath.Join(dir, logKeyFile), got.LogKeyPEM, 0o600); err != nil {
			return err
		}
	} else if err := os.Remove(filepath.Join(dir, logKeyFile)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return atomicfile.Write(filepath.Join(dir, federationKeyFile), got.FederationKeyPEM, 0o600)
}

// readJSON decodes the file at path into v; found is false when there is no file.
func readJSON(path string, v any) (found bool, err error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return false, fmt.Errorf("%s: %w", path, err)
	}
	return true, nil
}

// writeJSON writes v, indented, to path.
func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.Write(path, append(b, '\n'), 0o600)
}
