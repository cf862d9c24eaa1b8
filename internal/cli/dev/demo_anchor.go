package dev

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	crclient "sigs.k8s.io/controller-runtime/pkg/client"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
	"github.com/cairn-dev/cairn/internal/federation"
	"github.com/cairn-dev/cairn/manager"
	"github.com/cairn-dev/cairn/pkg/client"
)

// demoLogWait bounds the wait for an anchor's log entry, and for receipts that carry it.
const demoLogWait = time.Minute

// anchor is step 4: an anchor run now, with the admin token, and its log entry.
func (s *demoStory) anchor(ctx context.Context) (string, error) {
	token, secret, err := s.adminToken(ctx)
	if err != nil {
		return "", fmt.Errorf("read the admin token: %w", err)
	}
	s.sh.note("", "POST %s/federation/anchor with the admin token of Secret %s (read through %s)", s.t.federationURL, secret, s.t.kubeconfig)
	admin, err := client.New(s.t.federationURL, client.WithAdminToken(token))
	if err != nil {
		return "", err
	}
	a, err := admin.Anchor(ctx)
	if err != nil {
		return "", err
	}
	if a.NoOp() {
		return "", fmt.Errorf("the anchor run made no anchor: %s", a.Message)
	}
	bound := map[string]bool{}
	for _, id := range a.ParticipatingOperators {
		bound[id] = true
	}
	for _, o := range s.orgs {
		if !bound[o.operatorID] {
			return "", fmt.Errorf("%s binds no submission of %s (%s)", a.AnchorID, o.name, o.operatorID)
		}
	}
	s.anchorID = a.AnchorID
	rec, err := s.waitLogged(ctx)
	if err != nil {
		return "", err
	}
	s.sh.printf("%s\n", wrap("     ", fmt.Sprintf("%s binds %d operators' chain signatures: cross_anchor_hash %.16s..., anchored at %s, log index %d",
		a.AnchorID, len(a.ParticipatingOperators), a.CrossAnchorHash, a.AnchoredAt, *rec.TLogLogIndex)))
	return "one hash binds the latest chain signature of each organization; the federation signed it, and its transparency log holds it", nil
}

// adminToken reads the Federation's admin token from its Secret, as its administrator
// can, and names the Secret.
func (s *demoStory) adminToken(ctx context.Context) (token, secret string, err error) {
	c, err := crclient.New(s.t.kube, crclient.Options{Scheme: manager.NewScheme()})
	if err != nil {
		return "", "", err
	}
	fed := &fv1.Federation{}
	if err := c.Get(ctx, s.t.federation, fed); err != nil {
		return "", "", err
	}
	name := fed.Name + "-admin"
	if ref := fed.Spec.AdminTokenSecretRef; ref != nil {
		name = ref.Name
	}
	raw, err := federation.AdminToken(ctx, c, fed)
	if err == nil && len(raw) == 0 {
		err = errors.New("the admin token is empty: admin requests are off")
	}
	return string(raw), fed.Namespace + "/" + name, err
}

// waitLogged waits until the federation shows the run's anchor in its log.
func (s *demoStory) waitLogged(ctx context.Context) (*client.AnchorRecord, error) {
	ctx, cancel := context.WithTimeout(ctx, demoLogWait)
	defer cancel()
	for {
		rec, err := s.fed.AnchorRecord(ctx, s.anchorID)
		if err == nil && rec.TLogLogIndex != nil {
			return rec, nil
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("%s is not in the log: %w", s.anchorID, errors.Join(err, ctx.Err()))
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// receipts is step 5: each organization checks the receipts it kept, fetches the new one
// and verifies it offline.
func (s *demoStory) receipts(ctx context.Context) (string, error) {
	for _, o := range s.orgs {
		if err := s.verifyKept(ctx, o); err != nil {
			return "", err
		}
	}
	for _, o := range s.orgs {
		args := []string{"federation", "receipts", "--config-dir", demoConfigDir, "--output-dir", demoReceipts}
		res, err := s.sh.must(ctx, o.dir, o.slug, args...)
		if err != nil {
			return "", err
		}
		// A receipt is signed again once its log entry is in; wait for that one.
		if err := s.waitLoggedReceipt(ctx, o, args); err != nil {
			return "", err
		}
		s.sh.output(res.lastLine())
		if res, err = s.sh.must(ctx, o.dir, o.slug, "federation", "verify", "--config-dir", demoConfigDir, s.receipt()); err != nil {
			return "", err
		}
		s.sh.output(res.lastLine())
	}
	return "each receipt recomputes its cross-anchor hash, is signed by the pinned federation key and proves its log entry, with no network", nil
}

// receipt is where each organization keeps the receipt of this run's anchor, relative to
// its directory.
func (s *demoStory) receipt() string {
	return filepath.Join(demoReceipts, s.anchorID+".json")
}

// verifyKept verifies offline every receipt o kept from earlier runs. The command is
// printed only for the first, and for one that fails.
func (s *demoStory) verifyKept(ctx context.Context, o *demoOrg) error {
	kept, err := filepath.Glob(o.path(demoReceipts, "*.json"))
	if err != nil || len(kept) == 0 {
		return err
	}
	slices.Sort(kept)
	for _, path := range kept {
		rel, _ := filepath.Rel(o.dir, path)
		args := []string{"federation", "verify", "--config-dir", demoConfigDir, rel}
		res, err := s.sh.quiet(ctx, o.dir, args...)
		if err != nil {
			return err
		}
		if res.code != 0 {
			s.sh.printf("%s\n", commandLine(o.slug, args))
			s.sh.output(res.lastLine())
			return fmt.Errorf("%s's receipt %s, kept since an earlier run, does not verify: %s", o.name, rel, res.errorLine())
		}
	}
	what := fmt.Sprintf("its %d earlier receipts still verify", len(kept))
	if len(kept) == 1 {
		what = "its earlier receipt still verifies"
	}
	s.sh.note(o.slug, "%s offline (cairn federation verify --config-dir config receipts/<each>)", what)
	return nil
}

// waitLoggedReceipt runs args (receipts) again until o's receipt of the run's anchor
// carries its log entry.
func (s *demoStory) waitLoggedReceipt(ctx context.Context, o *demoOrg, args []string) error {
	ctx, cancel := context.WithTimeout(ctx, demoLogWait)
	defer cancel()
	for {
		raw, err := os.ReadFile(o.path(s.receipt()))
		if err == nil && bytes.Contains(raw, []byte(`"tlog_entry"`)) {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s has no receipt of %s with its log entry: %w", o.name, s.anchorID, errors.Join(err, ctx.Err()))
		case <-time.After(200 * time.Millisecond):
		}
		res, err := s.sh.quiet(ctx, o.dir, args...)
		if err == nil && res.code != 0 {
			err = res.failure(args, "0")
		}
		if err != nil {
			return err
		}
	}
}
