// Command sigstore-verify checks a Cairn anchor's Sigstore bundle without any
// Cairn code: every check is done by github.com/sigstore/sigstore-go's own
// trusted-root, bundle and verify packages. It is an independent cross-check
// of what Cairn emits, so it must never import anything from Cairn.
//
// What is verified, all offline:
//
//   - the bundle's message signature, as Ed25519ph (pre-hashed Ed25519 over
//     SHA-512) with the federation key given by --key, over the artifact
//     (--artifact FILE: the raw 32 bytes of the cross-anchor hash) or over its
//     SHA-512 digest (--artifact-digest sha512:HEX);
//   - at least one transparency log entry from a log in the trusted root: the
//     Rekor v2 hashedrekord 0.0.2 entry is rebuilt from the bundle's digest,
//     signature and the federation key, and its inclusion proof is checked
//     against the entry's checkpoint, which must be signed by the log's key
//     in the trusted root;
//   - at least one RFC 3161 timestamp over the signature, signed by a
//     timestamp authority in the trusted root.
//
// Build and run (from this directory; it is its own Go module):
//
//	go build -o sigstore-verify .
//	./sigstore-verify --bundle anchor.sigstore.json \
//	    --trusted-root trusted_root.json --key federation.pem \
//	    --artifact-digest sha512:$(xxd -r -p <<<"$CROSS_ANCHOR_HEX" | sha512sum | cut -d' ' -f1)
//
// or, with the raw 32 bytes of the cross-anchor hash in a file,
//
//	./sigstore-verify --bundle anchor.sigstore.json \
//	    --trusted-root trusted_root.json --key federation.pem --artifact anchor.bin
//
// --key is a PEM "PUBLIC KEY" (PKIX) Ed25519 key. The bundle's
// verificationMaterial.publicKey.hint only selects that key; it is not
// trusted. Exit status: 0 verified, 1 verification failed, 2 usage error.
//
// sigstore-go expects a Rekor v2 checkpoint's origin to be the host name of
// the log's baseUrl in the trusted root, without a port (it verifies the
// checkpoint as signed by url.Hostname(baseUrl)): a log run with
// --hostname=127.0.0.1:3120 fails with "note has no verifiable signatures";
// run it with --hostname=127.0.0.1 and publish baseUrl http://127.0.0.1:3120.
package main

import (
	"bytes"
	"crypto/ed25519"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/sigstore/sigstore-go/pkg/bundle"
	"github.com/sigstore/sigstore-go/pkg/root"
	"github.com/sigstore/sigstore-go/pkg/verify"
	"github.com/sigstore/sigstore/pkg/signature"
)

type usageError struct{ error }

func main() {
	err := run(os.Args[1:], os.Stdout, os.Stderr)
	var ue usageError
	switch {
	case err == nil:
		os.Exit(0)
	case errors.Is(err, flag.ErrHelp):
		os.Exit(2)
	case errors.As(err, &ue):
		fmt.Fprintf(os.Stderr, "sigstore-verify: %v\n", err)
		os.Exit(2)
	default:
		fmt.Fprintf(os.Stderr, "sigstore-verify: verification failed: %v\n", err)
		os.Exit(1)
	}
}

func run(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("sigstore-verify", flag.ContinueOnError)
	fs.SetOutput(stderr)
	bundlePath := fs.String("bundle", "", "Sigstore bundle (v0.3 JSON) to verify")
	rootPath := fs.String("trusted-root", "", "Sigstore trusted_root.json holding the Rekor v2 log key and the TSA chain")
	keyPath := fs.String("key", "", "federation Ed25519 public key, PEM (PKIX)")
	artifactPath := fs.String("artifact", "", "file holding the signed bytes (the raw 32-byte cross-anchor hash)")
	artifactDigest := fs.String("artifact-digest", "", "sha512:HEX digest of the signed bytes, instead of --artifact")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: sigstore-verify --bundle B.json --trusted-root R.json --key FED.pem (--artifact FILE | --artifact-digest sha512:HEX)")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usageError{err}
	}
	switch {
	case fs.NArg() > 0:
		fs.Usage()
		return usageError{fmt.Errorf("unexpected argument %q", fs.Arg(0))}
	case *bundlePath == "" || *rootPath == "" || *keyPath == "":
		fs.Usage()
		return usageError{errors.New("--bundle, --trusted-root and --key are required")}
	case (*artifactPath == "") == (*artifactDigest == ""):
		fs.Usage()
		return usageError{errors.New("give exactly one of --artifact and --artifact-digest")}
	}

	var artifactOpt verify.ArtifactPolicyOption
	if *artifactDigest != "" {
		alg, hexDigest, ok := strings.Cut(*artifactDigest, ":")
		if !ok || alg != "sha512" {
			return usageError{fmt.Errorf("--artifact-digest must be sha512:HEX, got %q", *artifactDigest)}
		}
		digest, err := hex.DecodeString(hexDigest)
		if err != nil || len(digest) != 64 {
			return usageError{fmt.Errorf("--artifact-digest: want 128 hex digits of SHA-512, got %q", hexDigest)}
		}
		artifactOpt = verify.WithArtifactDigest("sha512", digest)
	} else {
		artifact, err := os.ReadFile(*artifactPath)
		if err != nil {
			return err
		}
		artifactOpt = verify.WithArtifact(bytes.NewReader(artifact))
	}

	trustedRoot, err := root.NewTrustedRootFromPath(*rootPath)
	if err != nil {
		return fmt.Errorf("loading trusted root: %w", err)
	}
	fedKey, err := loadEd25519Key(*keyPath)
	if err != nil {
		return fmt.Errorf("loading --key: %w", err)
	}
	b, err := bundle.LoadJSONFromPath(*bundlePath)
	if err != nil {
		return fmt.Errorf("loading bundle: %w", err)
	}
	pk := b.GetVerificationMaterial().GetPublicKey()
	if pk == nil {
		return errors.New("bundle's verificationMaterial has no publicKey: expected a key-signed bundle")
	}

	// A hashedrekord signature is over the SHA-512 digest of the artifact, so
	// the federation key is loaded as an Ed25519ph verifier. The bundle's
	// publicKey.hint only selects it; any hint maps to --key.
	phVerifier, err := signature.LoadED25519phVerifier(fedKey)
	if err != nil {
		return fmt.Errorf("loading Ed25519ph verifier: %w", err)
	}
	keys := root.NewTrustedPublicKeyMaterialFromMapping(map[string]*root.ExpiringKey{
		pk.GetHint(): root.NewExpiringKey(phVerifier, time.Time{}, time.Time{}),
	})
	material := root.TrustedMaterialCollection{trustedRoot, keys}

	verifier, err := verify.NewVerifier(material,
		verify.WithTransparencyLog(1),
		verify.WithSignedTimestamps(1),
	)
	if err != nil {
		return fmt.Errorf("configuring verifier: %w", err)
	}
	result, err := verifier.Verify(b, verify.NewPolicy(artifactOpt, verify.WithKey()))
	if err != nil {
		return err
	}

	// VerifyTlogEntry fails on any entry from a log the trusted root knows
	// that does not verify, and skips only entries of unknown logs. So the
	// entries below, those of known logs, are exactly the verified ones.
	// Require one of them to be a Rekor v2 entry.
	logs := trustedRoot.RekorLogs()
	rekorV2 := 0
	for _, e := range b.GetVerificationMaterial().GetTlogEntries() {
		id := hex.EncodeToString(e.GetLogId().GetKeyId())
		tl, known := logs[id]
		if !known {
			continue
		}
		kv := e.GetKindVersion()
		if kv.GetKind() == "hashedrekord" && kv.GetVersion() == "0.0.2" {
			rekorV2++
		}
		// The checkpoint's signed note text is "origin\nsize\nroot hash\n...";
		// inclusionProof.treeSize and rootHash are not what was verified.
		cp := strings.SplitN(e.GetInclusionProof().GetCheckpoint().GetEnvelope(), "\n", 3)
		if len(cp) < 3 {
			return errors.New("verified checkpoint has no size line")
		}
		fmt.Fprintf(stdout, "tlog entry verified: log %s index %d (%s/%s), included in checkpoint %q of size %s, log id %s\n",
			tl.BaseURL, e.GetLogIndex(), kv.GetKind(), kv.GetVersion(), cp[0], cp[1], id)
	}
	if rekorV2 == 0 {
		return errors.New("no verified Rekor v2 (hashedrekord 0.0.2) entry in the bundle")
	}
	for _, ts := range result.VerifiedTimestamps {
		fmt.Fprintf(stdout, "timestamp verified: %s %s from %s\n", ts.Type, ts.Timestamp.UTC().Format(time.RFC3339Nano), ts.URI)
	}
	msg := b.GetMessageSignature()
	fmt.Fprintf(stdout, "signature verified: Ed25519ph by --key (bundle hint %q) over sha512:%s\n",
		pk.GetHint(), hex.EncodeToString(msg.GetMessageDigest().GetDigest()))
	return nil
}

func loadEd25519Key(path string) (ed25519.PublicKey, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	block, _ := pem.Decode(data)
	if block == nil || block.Type != "PUBLIC KEY" {
		return nil, errors.New("want a PEM PUBLIC KEY block")
	}
	pub, err := x509.ParsePKIXPublicKey(block.Bytes)
	if err != nil {
		return nil, err
	}
	edPub, ok := pub.(ed25519.PublicKey)
	if !ok {
		return nil, fmt.Errorf("want an Ed25519 key, got %T", pub)
	}
	return edPub, nil
}
