package dev

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"path/filepath"
	"strconv"
	"time"

	"k8s.io/client-go/rest"

	webhookconfig "github.com/cairn-dev/cairn/config/webhook"
	"github.com/cairn-dev/cairn/internal/atomicfile"
)

// Files cairn dev writes into the webhooks' certificate directory on every start.
const (
	// devWebhookCertsDir is the directory under --dir, unless --webhook-cert-dir names one.
	devWebhookCertsDir = "webhook-certs"
	// devWebhookCAFile is the CA the webhook configuration trusts.
	devWebhookCAFile = "ca.crt"
	// devWebhookCertFile and devWebhookKeyFile are the manager's serving certificate and
	// key, as controller-runtime's webhook server reads them.
	devWebhookCertFile = "tls.crt"
	devWebhookKeyFile  = "tls.key"
	// devWebhookHost is where the webhooks listen, and the address the certificate names.
	devWebhookHost = "127.0.0.1"
	// devCertValidity is how long the certificates are valid; they are made afresh on
	// every start.
	devCertValidity = 365 * 24 * time.Hour
)

// completeWebhooks settles where the webhooks listen: on devWebhookHost, on a free port
// unless --webhook-port names one, with certificates in <dir>/webhook-certs unless
// --webhook-cert-dir names another directory.
func (o *devOptions) completeWebhooks() error {
	w := &o.manager.Webhooks
	if !w.Enable {
		return nil
	}
	w.Host = devWebhookHost
	if w.CertDir == "" {
		w.CertDir = filepath.Join(o.env.Dir, devWebhookCertsDir)
	}
	if w.Port != 0 {
		return nil
	}
	l, err := net.Listen("tcp", net.JoinHostPort(devWebhookHost, "0"))
	if err != nil {
		return fmt.Errorf("pick a port for the admission webhooks: %w", err)
	}
	w.Port = l.Addr().(*net.TCPAddr).Port
	return l.Close()
}

// webhookURL is where the API server calls the webhooks.
func (o *devOptions) webhookURL() string {
	return "https://" + net.JoinHostPort(devWebhookHost, strconv.Itoa(o.manager.Webhooks.Port))
}

// prepareDevWebhooks writes a new CA and serving certificate into the webhooks'
// certificate directory for the manager to serve, and returns the CA's PEM; nil when the
// webhooks are off.
func prepareDevWebhooks(o *devOptions) ([]byte, error) {
	if !o.manager.Webhooks.Enable {
		return nil, nil
	}
	ca, err := writeDevWebhookCerts(o.manager.Webhooks.CertDir, time.Now())
	if err != nil {
		return nil, fmt.Errorf("admission webhooks' certificates: %w", err)
	}
	return ca, nil
}

// installDevWebhooks installs the webhook configuration calling the manager, and waits
// until the API server calls it; with the webhooks off, it removes a configuration an
// earlier start installed, which would otherwise refuse every write it covers.
func installDevWebhooks(ctx context.Context, cfg *rest.Config, o *devOptions, caPEM []byte) error {
	if !o.manager.Webhooks.Enable {
		return webhookconfig.Uninstall(ctx, cfg)
	}
	return webhookconfig.Install(ctx, cfg, o.webhookURL(), caPEM)
}

// writeDevWebhookCerts makes a CA, and a serving certificate for devWebhookHost signed by
// it, valid from now; writes ca.crt, tls.crt and tls.key (mode 0600) into dir; and
// returns the CA's PEM.
func writeDevWebhookCerts(dir string, now time.Time) ([]byte, error) {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	caTmpl := &x509.Certificate{
		Subject:               pkix.Name{CommonName: "cairn dev webhook CA"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(devCertValidity),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLenZero:        true,
	}
	caDER, caCert, err := signCert(caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	leaf := &x509.Certificate{
		Subject:     pkix.Name{CommonName: devWebhookHost},
		NotBefore:   caTmpl.NotBefore,
		NotAfter:    caTmpl.NotAfter,
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses: []net.IP{net.ParseIP(devWebhookHost)},
		DNSNames:    []string{"localhost"},
	}
	leafDER, _, err := signCert(leaf, caCert, &key.PublicKey, caKey)
	if err != nil {
		return nil, err
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, err
	}
	caPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER})
	for _, f := range []struct {
		name string
		data []byte
	}{
		{devWebhookCAFile, caPEM},
		{devWebhookCertFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: leafDER})},
		{devWebhookKeyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER})},
	} {
		if err := atomicfile.Write(filepath.Join(dir, f.name), f.data, 0o600); err != nil {
			return nil, err
		}
	}
	return caPEM, nil
}

// signCert signs tmpl with parent's key, giving it a random serial number.
func signCert(tmpl, parent *x509.Certificate, pub *ecdsa.PublicKey, parentKey *ecdsa.PrivateKey) ([]byte, *x509.Certificate, error) {
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return nil, nil, err
	}
	tmpl.SerialNumber = serial
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, pub, parentKey)
	if err != nil {
		return nil, nil, err
	}
	cert, err := x509.ParseCertificate(der)
	return der, cert, err
}

// sayWebhooks prints where the webhooks run, or that they are off.
func (o *devOptions) sayWebhooks(say func(string, ...any)) {
	w := o.manager.Webhooks
	if !w.Enable {
		say("webhooks       off (--enable-webhooks=false): the controllers refuse bad objects in status, later")
		return
	}
	say("webhooks       %s (CA %s): kubectl apply of a bad FederationOperator or Submission is refused at once",
		o.webhookURL(), filepath.Join(w.CertDir, devWebhookCAFile))
}
