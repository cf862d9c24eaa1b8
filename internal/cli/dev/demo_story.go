package dev

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/cairn-dev/cairn/internal/cli/keygen"
	"github.com/cairn-dev/cairn/pkg/client"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

// demoStory is one run of the demo.
type demoStory struct {
	t   demoTarget
	out io.Writer
	sh  *demoShell
	// fed reads the federation API as anyone may.
	fed *client.Client
	// status is the federation's, read when the run began.
	status *client.Status
	// run counts the runs of the story, this one included.
	run  int
	orgs []*demoOrg
	// rotating and withdrawing are the organizations that rotate their key and withdraw.
	rotating, withdrawing *demoOrg
	// auditor is the auditor's directory.
	auditor string

	// anchorID is the anchor this run made.
	anchorID string
}

// newDemoStory prepares a run against t: the organizations' directories, the run count,
// a federation that presents its key. It prints the story's opening.
func newDemoStory(ctx context.Context, out io.Writer, t demoTarget) (*demoStory, error) {
	root, err := filepath.Abs(filepath.Join(t.dir, demoDir))
	if err != nil {
		return nil, err
	}
	bin, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("find the cairn binary: %w", err)
	}
	fed, err := client.New(t.federationURL)
	if err != nil {
		return nil, err
	}
	s := &demoStory{t: t, out: out, fed: fed, orgs: demoOrgs(root), auditor: filepath.Join(root, "auditor"),
		sh: newDemoShell(bin, out, "CAIRN_FEDERATION_URL="+t.federationURL, "CAIRN_HMAC_SECRET_FILE="+demoSecretFile)}
	s.rotating, s.withdrawing = s.orgs[1], s.orgs[2]
	if err := os.MkdirAll(s.auditor, 0o700); err != nil {
		return nil, err
	}
	for _, o := range s.orgs {
		if err := o.prepare(); err != nil {
			return nil, fmt.Errorf("%s: %w", o.name, err)
		}
	}
	if s.status, err = waitFederationReady(ctx, fed); err != nil {
		return nil, err
	}
	if s.run, err = nextRun(root); err != nil {
		return nil, err
	}
	where := filepath.Join(t.dir, demoDir)
	s.sh.printf("Cairn demo, run %d: three organizations seal their model calls and cross-anchor them\n", s.run)
	s.sh.printf("  federation  %s (public page %s/), Federation %s\n", t.federationURL, t.federationURL, t.federation)
	s.sh.printf("  state       %s/<org>/: HMAC secret, Ed25519 keys, client config, chain.db, exports, receipts\n", where)
	s.sh.printf("  commands    run in %s/<org>/ (the prompt names it) with\n", where)
	s.sh.printf("              export CAIRN_FEDERATION_URL=%s CAIRN_HMAC_SECRET_FILE=%s\n", t.federationURL, demoSecretFile)
	return s, nil
}

// steps are the story, in order.
func (s *demoStory) steps() []demoStep {
	return []demoStep{
		{"seal", "Each organization's app sends its model calls over OTLP to its own chain service", s.seal},
		{"register", "Each organization joins the federation with a key of its own", s.register},
		{"submit", "Each submits the segment of its chain since its last accepted submission", s.submit},
		{"anchor", "The federation anchors them: POST /federation/anchor, as its schedule would", s.anchor},
		{"receipts", "Each fetches its receipt and verifies it offline", s.receipts},
		{"audit", "An auditor verifies the anchor live, then audits it with the organizations' exports", s.audit},
		{"witnesses", "The members' witnesses cosign the log's checkpoints, and refuse one that contradicts them", s.witnesses},
		{"rotate-key", s.rotating.name + " rotates its key", s.rotate},
		{"withdraw", s.withdrawing.name + " withdraws from the federation", s.withdraw},
	}
}

// seal is step 1: spans in through OTLP, and each chain verified in full.
func (s *demoStory) seal(ctx context.Context) (string, error) {
	for _, o := range s.orgs {
		url, first, last, err := o.sealSpans(ctx)
		if err != nil {
			return "", fmt.Errorf("%s's app: %w", o.name, err)
		}
		s.sh.note(o.slug, "%d gen_ai spans to %s/v1/traces, sealed as seq %d..%d", o.spans, url, first, last)
	}
	for _, o := range s.orgs {
		res, err := s.sh.must(ctx, o.dir, o.slug, "chain", "verify", "--db", "chain.db")
		if err != nil {
			return "", fmt.Errorf("the chain of %s does not verify: %w", o.name, err)
		}
		s.sh.output(res.lastLine())
	}
	return "every span is an entry of its organization's HMAC chain, and each chain verifies entry by entry", nil
}

// submit is step 3: cairn federation submit --db, keeping the export for the auditor.
func (s *demoStory) submit(ctx context.Context) (string, error) {
	for _, o := range s.orgs {
		o.export = filepath.Join(demoExports, fmt.Sprintf("run-%d.json", s.run))
		res, err := s.sh.must(ctx, o.dir, o.slug, "federation", "submit", "--config-dir", demoConfigDir, "--db", "chain.db",
			"--with-entries", "--save-export", o.export)
		if err != nil {
			return "", err
		}
		if !strings.HasPrefix(res.lastLine(), "accepted ") {
			return "", fmt.Errorf("%s submitted nothing: %s", o.name, strings.TrimSpace(res.stderr))
		}
		s.sh.output(res.lastLine())
	}
	return "the federation checked each export's signature under its operator's key, and that it continues the operator's last accepted segment", nil
}

// rotate is step 7: a new key for the same operator.
func (s *demoStory) rotate(ctx context.Context) (string, error) {
	o := s.rotating
	dir := o.nextKeyDir()
	if err := s.keygen(ctx, o, dir, "fingerprint"); err != nil {
		return "", err
	}
	res, err := s.sh.must(ctx, o.dir, o.slug, "federation", "rotate-key", "--config-dir", demoConfigDir,
		"--new-private-key", filepath.Join(dir, keygen.PrivateKeyFile))
	if err != nil {
		return "", err
	}
	s.sh.output(res.lastLine())
	return fmt.Sprintf("%s keeps its operator ID under the new key; the rotation is logged, and the federation takes only the new key's signatures from now on", o.operatorID), nil
}

// withdraw is step 8: the operator leaves, for good.
func (s *demoStory) withdraw(ctx context.Context) (string, error) {
	o := s.withdrawing
	res, err := s.sh.must(ctx, o.dir, o.slug, "federation", "withdraw", "--yes", "--config-dir", demoConfigDir)
	if err != nil {
		return "", err
	}
	s.sh.output(res.lastLine())
	sum, err := s.fed.Operator(ctx, o.operatorID, client.PageOptions{Limit: 1})
	if err != nil {
		return "", err
	}
	if sum.Phase != "Withdrawn" {
		return "", fmt.Errorf("the federation shows %s as %s, not Withdrawn", o.operatorID, sum.Phase)
	}
	return fmt.Sprintf("%s is Withdrawn: the federation refuses its submissions, its receipts stay valid, and neither its ID nor its key registers again (the next run rejoins %s under a new key)",
		o.operatorID, o.name), nil
}

// keyIDOf is the operator ID of the public key in dir of o.
func keyIDOf(o *demoOrg, dir string) (string, error) {
	text, err := os.ReadFile(o.path(dir, keygen.PublicKeyFile))
	if err != nil {
		return "", err
	}
	pub, err := protocol.ParsePublicKeyPEM(text)
	if err != nil {
		return "", err
	}
	return protocol.OperatorID(pub), nil
}
