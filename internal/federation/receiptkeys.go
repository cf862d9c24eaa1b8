package federation

import (
	"context"
	"crypto/ed25519"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

// SigningKeys returns the federation private keys that signers of fed's receipts may use,
// by the PEM of their public half: the key of status.signingKeySecret (the current one)
// and that of every Secret in fed's namespace labelled as fed's (the Secrets the
// Federation controller generated, rotated-from ones included) whose public half is in
// fed's key history. A key whose public half is not in the key history is never
// returned, so a planted Secret signs nothing. It reads and creates nothing else: a
// Federation without a signing key yet is an error.
func SigningKeys(ctx context.Context, c client.Reader, fed *fv1.Federation) (map[fv1.PublicKeyPEM]ed25519.PrivateKey, error) {
	if fed.Status.SigningKeySecret == "" {
		return nil, fmt.Errorf("federation %s has no signing key yet", fed.Name)
	}
	var current corev1.Secret
	if err := c.Get(ctx, client.ObjectKey{Namespace: fed.Namespace, Name: fed.Status.SigningKeySecret}, &current); err != nil {
		return nil, err
	}
	var labelled corev1.SecretList
	if err := c.List(ctx, &labelled, client.InNamespace(fed.Namespace), client.MatchingLabels{FederationLabel: fed.Name}); err != nil &&
		!apierrors.IsNotFound(err) {
		return nil, err
	}
	keys := map[fv1.PublicKeyPEM]ed25519.PrivateKey{}
	for _, s := range append([]corev1.Secret{current}, labelled.Items...) {
		text, ok := s.Data[SigningKeySecretKey]
		if !ok {
			continue
		}
		key, err := protocol.ParsePrivateKeyPEM(text)
		if err != nil {
			continue
		}
		pemText, err := protocol.MarshalPublicKeyPEM(key.Public().(ed25519.PublicKey))
		if err != nil || KeyIndex(fed, fv1.PublicKeyPEM(pemText)) < 0 {
			continue
		}
		keys[fv1.PublicKeyPEM(pemText)] = key
	}
	return keys, nil
}

// ReceiptSigner returns the key of keys (see SigningKeys) that signs ca's receipt: the
// key that signed the anchor, or, when its Secret is gone, the latest key of fed's key
// history that keys hold and that follows it (Receipt accepts such a key: a rotation
// re-signs receipts). ok is false when keys hold neither.
func ReceiptSigner(fed *fv1.Federation, ca *fv1.CrossAnchor, keys map[fv1.PublicKeyPEM]ed25519.PrivateKey) (ed25519.PrivateKey, bool) {
	if key, ok := keys[ca.Spec.FederationPublicKeyPEM]; ok {
		return key, true
	}
	signer := KeyIndex(fed, ca.Spec.FederationPublicKeyPEM)
	if signer < 0 {
		return nil, false
	}
	for i := len(fed.Status.KeyHistory) - 1; i > signer; i-- {
		if key, ok := keys[fed.Status.KeyHistory[i].PublicKeyPEM]; ok {
			return key, true
		}
	}
	return nil, false
}
