package dev

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/cairn-dev/cairn/internal/cli/keygen"
	"github.com/cairn-dev/cairn/internal/clientconfig"
	"github.com/cairn-dev/cairn/pkg/client"
)

// register is step 2: each organization registers, unless it is already registered; one
// that withdrew rejoins under a new key.
func (s *demoStory) register(ctx context.Context) (string, error) {
	rejoined := ""
	for _, o := range s.orgs {
		rec, err := s.operatorRecord(o)
		if err != nil {
			return "", fmt.Errorf("%s: %w", o.name, err)
		}
		if rec == nil {
			dir := demoFirstKeys
			if o.nextKeyDir() == demoFirstKeys { // a run that failed before registering may have made them
				if err := s.keygen(ctx, o, dir, "operator_id"); err != nil {
					return "", err
				}
			}
			if err := s.registerKey(ctx, o, dir); err != nil {
				return "", err
			}
			continue
		}
		keyDir, err := filepath.Rel(o.dir, filepath.Dir(rec.PrivateKey))
		if err != nil {
			return "", err
		}
		sum, err := s.fed.Operator(ctx, rec.OperatorID, client.PageOptions{Limit: 1})
		if client.StatusOf(err) == 404 {
			return "", fmt.Errorf("%s registered as %s, which the federation does not know: its state was lost (start over: make dev DEV_FLAGS=--fresh)", o.name, rec.OperatorID)
		}
		if err != nil {
			return "", err
		}
		switch sum.Phase {
		case "Active":
			s.sh.note(o.slug, "already registered: %s, Active, signing with %s/", rec.OperatorID, keyDir)
			o.operatorID = rec.OperatorID
			if o.keyID, err = keyIDOf(o, keyDir); err != nil {
				return "", err
			}
		case "Withdrawn":
			if err := s.rejoin(ctx, o, rec.OperatorID, keyDir); err != nil {
				return "", err
			}
			rejoined = fmt.Sprintf("; %s rejoined as %s, since %s is never registered again", o.name, o.operatorID, rec.OperatorID)
		default:
			return "", fmt.Errorf("%s is %s at the federation", rec.OperatorID, sum.Phase)
		}
	}
	return "each organization is an operator whose ID is the hash of its first key; its client pinned the federation's keys in config/federations/<host>/" + rejoined, nil
}

// operatorRecord returns the operator o's client recorded for the federation, nil when
// there is none. When the federation answered at another address before (cairn dev ran
// with other ports), the record and the pinned keys follow it, once the federation is
// seen to present the keys pinned at the old address.
func (s *demoStory) operatorRecord(o *demoOrg) (*clientconfig.Operator, error) {
	cfg, url := o.config(), s.t.federationURL
	if rec, err := cfg.Operator(url); rec != nil || err != nil {
		return rec, err
	}
	old, err := cfg.DefaultService()
	if err != nil || old == "" || old == url {
		return nil, err
	}
	rec, err := cfg.Operator(old)
	if err != nil || rec == nil {
		return nil, err
	}
	presented := clientconfig.PresentedKeys(s.status)
	if _, err := cfg.CheckPins(old, presented); err != nil {
		return nil, fmt.Errorf("the federation at %s is not the one %s registered with at %s: %w", url, o.name, old, err)
	}
	moved := *rec
	moved.Service = url
	if err := cfg.SavePins(url, presented); err != nil {
		return nil, err
	}
	if err := cfg.SaveOperator(&moved); err != nil {
		return nil, err
	}
	if err := cfg.SetDefaultService(url); err != nil {
		return nil, err
	}
	s.sh.note(o.slug, "the federation moved from %s; it presents the keys pinned there, so its record moves with it", old)
	return &moved, nil
}

// rejoin shows that the withdrawn operator's key is refused, then registers o again under
// a new key, as a new operator.
func (s *demoStory) rejoin(ctx context.Context, o *demoOrg, oldID, oldDir string) error {
	s.sh.note(o.slug, "withdrew as %s; an operator ID is never registered again, nor any key it held, so its old key is refused:", oldID)
	args := registerArgs(o, oldDir)
	res, err := s.sh.run(ctx, o.dir, o.slug, args...)
	if err != nil {
		return err
	}
	if res.code == 0 || !strings.Contains(res.stderr, "key_already_registered") {
		return res.failure(args, "1, key_already_registered")
	}
	s.sh.output(res.errorLine())
	dir := o.nextKeyDir()
	if err := s.keygen(ctx, o, dir, "operator_id"); err != nil {
		return err
	}
	return s.registerKey(ctx, o, dir)
}

// keygen makes a key pair in dir of o and prints the line of keygen's output that starts
// with show: operator_id for a key that registers, fingerprint for one an operator
// rotates to.
func (s *demoStory) keygen(ctx context.Context, o *demoOrg, dir, show string) error {
	res, err := s.sh.must(ctx, o.dir, o.slug, "keygen", "--output-dir", dir)
	if err != nil {
		return err
	}
	for _, line := range strings.Split(res.stdout, "\n") {
		if strings.HasPrefix(line, show) {
			s.sh.output(res.relative(line))
		}
	}
	return nil
}

// registerKey registers o with the key pair in dir.
func (s *demoStory) registerKey(ctx context.Context, o *demoOrg, dir string) error {
	res, err := s.sh.must(ctx, o.dir, o.slug, registerArgs(o, dir)...)
	if err != nil {
		return err
	}
	o.operatorID = strings.TrimSpace(res.stdout)
	o.keyID = o.operatorID
	s.sh.output(o.operatorID)
	return nil
}

// registerArgs register o with the key pair in dir.
func registerArgs(o *demoOrg, dir string) []string {
	return []string{"federation", "register", "--config-dir", demoConfigDir, "--org", o.name,
		"--public-key", filepath.Join(dir, keygen.PublicKeyFile), "--private-key", filepath.Join(dir, keygen.PrivateKeyFile)}
}
