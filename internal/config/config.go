// Package config lists every environment variable cairn reads and applies them to flags.
//
// Precedence is flag, then environment variable, then the flag's default. Commands call
// Apply after parsing flags; nothing else in the tree reads the environment.
package config

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/spf13/pflag"
)

// Var is one environment variable and the flag it stands in for.
type Var struct {
	// Name is the environment variable.
	Name string
	// Flag is the long flag the variable sets when the flag was not given.
	Flag string
	// Description says what it controls.
	Description string
	// Sensitive variables are never printed with their value.
	Sensitive bool
}

// Vars is the table of every variable cairn reads.
var Vars = []Var{
	{Name: "CAIRN_METRICS_BIND_ADDRESS", Flag: "metrics-bind-address", Description: "address of the manager's Prometheus metrics endpoint; 0 disables it"},
	{Name: "CAIRN_METRICS_SECURE", Flag: "metrics-secure", Description: "serve metrics over HTTPS with Kubernetes authentication and authorization"},
	{Name: "CAIRN_HEALTH_PROBE_BIND_ADDRESS", Flag: "health-probe-bind-address", Description: "address of the manager's /healthz and /readyz endpoints"},
	{Name: "CAIRN_LEADER_ELECT", Flag: "leader-elect", Description: "elect one active manager among replicas"},
	{Name: "CAIRN_LEADER_ELECTION_NAMESPACE", Flag: "leader-election-namespace", Description: "namespace of the leader election Lease"},
	{Name: "CAIRN_FEDERATION_BIND_ADDRESS", Flag: "federation-bind-address", Description: "address of the federation API (/federation/*) on every manager replica; 0 disables it"},
	{Name: "CAIRN_FEDERATION", Flag: "federation", Description: "the Federation the federation API serves, namespace/name"},
	{Name: "CAIRN_NAMESPACES", Flag: "namespaces", Description: "comma-separated namespaces the manager watches; unset: every namespace"},
	{Name: "CAIRN_FEDERATION_URL", Flag: "service", Description: "base URL of the federation the cairn federation commands talk to"},
	{Name: "CAIRN_FEDERATION_MAX_BODY_BYTES", Flag: "federation-max-body-bytes", Description: "largest request body the federation API reads"},
	{Name: "CAIRN_FEDERATION_SIDECAR_QUOTA_BYTES", Flag: "federation-sidecar-quota-bytes", Description: "distinct sidecar bytes one operator's submissions may name"},
	{Name: "CAIRN_FEDERATION_SIDECAR_STORAGE_BYTES", Flag: "federation-sidecar-storage-bytes", Description: "sidecar bytes the federation's store may hold"},
	{Name: "CAIRN_FEDERATION_RATE_LIMIT", Flag: "federation-rate-limit", Description: "requests a second one client address may send the federation API; negative: no limit"},
	{Name: "CAIRN_FEDERATION_REGISTRATION_LIMIT", Flag: "federation-registration-limit", Description: "registrations one client address (an IPv6 /64) may make in the registration window; negative: no limit"},
	{Name: "CAIRN_FEDERATION_REGISTRATION_WINDOW", Flag: "federation-registration-window", Description: "the sliding window of the registration limit, such as 1h"},
	{Name: "CAIRN_FEDERATION_MAX_PENDING_REGISTRATIONS", Flag: "federation-max-pending-registrations", Description: "operators that may wait for approval under registration: approval; negative: no bound"},
	{Name: "CAIRN_FEDERATION_TRUSTED_PROXIES", Flag: "federation-trusted-proxies", Description: "comma-separated CIDRs of reverse proxies whose X-Forwarded-For names the client address"},
	{Name: "CAIRN_FEDERATION_OPERATOR_RATE_LIMIT", Flag: "federation-operator-rate-limit", Description: "authenticated requests a second one operator may send the federation API; negative: no limit"},
	{Name: "CAIRN_LOG_DIR", Flag: "log-dir", Description: "directory of the embedded transparency logs"},
	{Name: "CAIRN_SIDECAR_DIR", Flag: "sidecar-dir", Description: "directory of the submissions' attestation sidecars; unset: <log-dir>/_sidecars"},
	{Name: "CAIRN_HISTORY_STORE", Flag: "history-store", Description: "where anchored records go once their retention passed: sqlite, postgres or none"},
	{Name: "CAIRN_HISTORY_DSN", Flag: "history-dsn", Description: "the history store's SQLite file or PostgreSQL connection string", Sensitive: true},
	{Name: "CAIRN_HISTORY_DSN_FILE", Flag: "history-dsn-file", Description: "file holding the history store's connection string (a mounted Secret)"},
	{Name: "CAIRN_HISTORY_INTERVAL", Flag: "history-interval", Description: "how often the leader moves finished records to the history store"},
	{Name: "CAIRN_ENABLE_WEBHOOKS", Flag: "enable-webhooks", Description: "serve the manager's validating admission webhooks"},
	{Name: "CAIRN_WEBHOOK_PORT", Flag: "webhook-port", Description: "port of the manager's admission webhooks"},
	{Name: "CAIRN_WEBHOOK_CERT_DIR", Flag: "webhook-cert-dir", Description: "directory of the admission webhooks' tls.crt and tls.key"},
	{Name: "CAIRN_DEV_DIR", Flag: "dir", Description: "state directory of cairn dev (etcd data, kubeconfig)"},
	{Name: "CAIRN_DB_PATH", Flag: "db", Description: "path of the chain's SQLite file"},
	{Name: "CAIRN_HMAC_SECRET", Flag: "secret-hex", Description: "the chain's HMAC secret, hex, at least 16 bytes", Sensitive: true},
	{Name: "BIJOTEL_HMAC_SECRET", Flag: "legacy-secret-hex", Description: "the BIJOTEL chain's HMAC secret, hex, that cairn chain import verifies the legacy chain with", Sensitive: true},
	{Name: "CAIRN_HMAC_SECRET_FILE", Flag: "secret-file", Description: "file holding the chain's HMAC secret in hex"},
	{Name: "CAIRN_API_KEY", Flag: "api-key", Description: "API key of cairn serve: every /api route but health and version needs it as a bearer token", Sensitive: true},
	{Name: "CAIRN_ALLOWED_HOSTS", Flag: "allowed-hosts", Description: "comma-separated host names cairn serve answers to besides localhost and its listen address"},
	{Name: "CAIRN_REGION", Flag: "region", Description: "grid region of the energy of calls that name none (cairn serve, cairn energy summary)"},
	{Name: "CAIRN_INTENSITY_OVERRIDES", Flag: "intensity-overrides", Description: "grid intensities in gCO2/kWh by region, region=g pairs separated by commas (cairn serve, cairn energy summary)"},
	{Name: "CAIRN_POLICY_RULES", Flag: "policy-rules", Description: "policy rule file of cairn serve, YAML or JSON; unset: the built-in rules"},
	{Name: "CAIRN_CONSENSUS_URL", Flag: "consensus-url", Description: "OpenAI-compatible API root that cairn serve's consensus route asks"},
	{Name: "CAIRN_CONSENSUS_API_KEY", Flag: "consensus-api-key", Description: "API key of the consensus API", Sensitive: true},
	{Name: "CAIRN_CONSENSUS_MODELS", Flag: "consensus-models", Description: "comma-separated models a consensus request that names none asks"},
	{Name: "KUBEBUILDER_ASSETS", Flag: "assets", Description: "directory holding kube-apiserver, etcd and kubectl (hack/setup-envtest.sh prints it)"},
}

// Apply sets each flag of fs that was not given on the command line from its variable,
// read through lookup (os.LookupEnv in production). Flags fs does not define are skipped.
func Apply(fs *pflag.FlagSet, lookup func(string) (string, bool)) error {
	for _, v := range Vars {
		f := fs.Lookup(v.Flag)
		if f == nil || f.Changed {
			continue
		}
		val, ok := lookup(v.Name)
		if !ok || val == "" {
			continue
		}
		if err := fs.Set(v.Flag, val); err != nil {
			if v.Sensitive { // the flag's own error quotes the value
				return fmt.Errorf("environment variable %s=(redacted) for --%s: invalid value of type %s", v.Name, v.Flag, f.Value.Type())
			}
			return fmt.Errorf("environment variable %s=%q for --%s: %w", v.Name, val, v.Flag, err)
		}
		if err := fs.SetAnnotation(v.Flag, fromEnvironment, []string{v.Name}); err != nil {
			return err
		}
	}
	return nil
}

// fromEnvironment is the annotation Apply puts on a flag it set.
const fromEnvironment = "cairn.dev/from-environment"

// GivenOnCommandLine reports whether the flag name of fs was given on the command line,
// not set by Apply from the environment.
func GivenOnCommandLine(fs *pflag.FlagSet, name string) bool {
	f := fs.Lookup(name)
	return f != nil && f.Changed && f.Annotations[fromEnvironment] == nil
}

// WriteTable prints, for --help, the variables that stand in for flags of fs; nothing
// when there are none.
func WriteTable(w io.Writer, fs *pflag.FlagSet) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	header := "\nEnvironment variables (a flag given on the command line wins):\n"
	for _, v := range Vars {
		if fs.Lookup(v.Flag) == nil {
			continue
		}
		if _, err := io.WriteString(tw, header); err != nil {
			return err
		}
		header = ""
		if _, err := fmt.Fprintf(tw, "  %s\t--%s\t%s\n", v.Name, v.Flag, v.Description); err != nil {
			return err
		}
	}
	return tw.Flush()
}
