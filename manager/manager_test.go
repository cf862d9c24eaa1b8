package manager

import (
	"maps"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
)

func TestOptionsValidate(t *testing.T) {
	tests := map[string]struct {
		change  func(*Options)
		wantErr string
	}{
		"defaults":                   {change: func(*Options) {}},
		"metrics disabled":           {change: func(o *Options) { o.MetricsBindAddress = "0" }},
		"loopback only":              {change: func(o *Options) { o.HealthProbeBindAddress = "127.0.0.1:9440" }},
		"metrics no port":            {change: func(o *Options) { o.MetricsBindAddress = "8443" }, wantErr: `--metrics-bind-address "8443"`},
		"probes no port":             {change: func(o *Options) { o.HealthProbeBindAddress = "localhost" }, wantErr: `--health-probe-bind-address "localhost"`},
		"probes required":            {change: func(o *Options) { o.HealthProbeBindAddress = "" }, wantErr: "--health-probe-bind-address"},
		"webhooks on":                {change: func(o *Options) { o.Webhooks.Enable = true }},
		"webhook port":               {change: func(o *Options) { o.Webhooks.Enable, o.Webhooks.Port = true, 0 }, wantErr: "--webhook-port 0"},
		"webhooks off":               {change: func(o *Options) { o.Webhooks.Port = 0 }},
		"api disabled":               {change: func(o *Options) { o.FederationBindAddress, o.Federation = "0", "" }},
		"api no port":                {change: func(o *Options) { o.FederationBindAddress = "8088" }, wantErr: `--federation-bind-address "8088"`},
		"api no namespace":           {change: func(o *Options) { o.Federation = "cairn" }, wantErr: `--federation "cairn": want namespace/name`},
		"api two slashes":            {change: func(o *Options) { o.Federation = "a/b/c" }, wantErr: `--federation "a/b/c"`},
		"api zero limit":             {change: func(o *Options) { o.FederationMaxBodyBytes = 0 }, wantErr: "--federation-max-body-bytes 0"},
		"no address limit":           {change: func(o *Options) { o.FederationRateLimit = -1 }},
		"no operator limit":          {change: func(o *Options) { o.FederationOperatorRateLimit = -1 }},
		"address limit 0":            {change: func(o *Options) { o.FederationRateLimit = 0 }, wantErr: "--federation-rate-limit 0"},
		"operator limit 0":           {change: func(o *Options) { o.FederationOperatorRateLimit = 0 }, wantErr: "--federation-operator-rate-limit 0"},
		"limit NaN":                  {change: func(o *Options) { o.FederationRateLimit = math.NaN() }, wantErr: "--federation-rate-limit NaN"},
		"limit +Inf":                 {change: func(o *Options) { o.FederationOperatorRateLimit = math.Inf(1) }, wantErr: "--federation-operator-rate-limit +Inf"},
		"namespaces":                 {change: func(o *Options) { o.Namespaces = []string{"tenant-a", "cairn-system"} }},
		"no registration limit":      {change: func(o *Options) { o.FederationRegistrationLimit = -1 }},
		"registration limit 0":       {change: func(o *Options) { o.FederationRegistrationLimit = 0 }, wantErr: "--federation-registration-limit 0"},
		"registration limit 101":     {change: func(o *Options) { o.FederationRegistrationLimit = 101 }, wantErr: "--federation-registration-limit 101: want 1 to 100"},
		"registration window 0":      {change: func(o *Options) { o.FederationRegistrationWindow = 0 }, wantErr: "--federation-registration-window 0s"},
		"registration window 8 days": {change: func(o *Options) { o.FederationRegistrationWindow = 192 * time.Hour }, wantErr: "--federation-registration-window 192h0m0s"},
		"no pending bound":           {change: func(o *Options) { o.FederationMaxPendingRegistrations = -1 }},
		"pending bound 0":            {change: func(o *Options) { o.FederationMaxPendingRegistrations = 0 }, wantErr: "--federation-max-pending-registrations 0"},
		"trusted proxies":            {change: func(o *Options) { o.FederationTrustedProxies = []string{"10.0.0.0/8", "fd00::/8", "192.0.2.1"} }},
		"trusted proxy not a CIDR":   {change: func(o *Options) { o.FederationTrustedProxies = []string{"10.0.0.0/8", "proxy.local"} }, wantErr: `--federation-trusted-proxies: "proxy.local"`},
		"federation outside namespaces": {change: func(o *Options) { o.Namespaces = []string{"tenant-a"} },
			wantErr: `--federation "cairn-system/cairn": namespace cairn-system is not among --namespaces tenant-a`},
		"api off, any namespaces": {change: func(o *Options) { o.FederationBindAddress, o.Namespaces = "0", []string{"tenant-a"} }},
		"namespace not a name":    {change: func(o *Options) { o.Namespaces = []string{"cairn-system", "Tenant_A"} }, wantErr: `--namespaces: "Tenant_A" is not a namespace name`},
		"empty namespace":         {change: func(o *Options) { o.Namespaces = []string{"cairn-system", ""} }, wantErr: `--namespaces: "" is not a namespace name`},
		"namespace twice":         {change: func(o *Options) { o.Namespaces = []string{"cairn-system", "cairn-system"} }, wantErr: "--namespaces: cairn-system is given twice"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			o := NewOptions()
			tc.change(o)
			err := o.Validate()
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("Validate: %v", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("Validate: got %v, want an error containing %q", err, tc.wantErr)
			}
		})
	}
}

func TestNamespacesRestrictTheCache(t *testing.T) {
	o := NewOptions()
	if got := o.cacheOptions().DefaultNamespaces; got != nil {
		t.Errorf("no --namespaces: the cache is restricted to %v, want every namespace", got)
	}
	fs := pflag.NewFlagSet("manager", pflag.ContinueOnError)
	o.AddFlags(fs)
	// A second --namespaces adds to the first: an overlay appends to the Deployment's.
	if err := fs.Parse([]string{"--namespaces=cairn-system", "--namespaces=tenant-a,tenant-b"}); err != nil {
		t.Fatal(err)
	}
	got := slices.Sorted(maps.Keys(o.cacheOptions().DefaultNamespaces))
	if want := []string{"cairn-system", "tenant-a", "tenant-b"}; !slices.Equal(got, want) {
		t.Errorf("--namespaces=cairn-system --namespaces=tenant-a,tenant-b: the cache watches %v, want %v", got, want)
	}
}

func TestSchemeKnowsEveryKind(t *testing.T) {
	s := NewScheme()
	for _, kind := range []string{"Federation", "FederationOperator", "Submission", "CrossAnchor", "Secret"} {
		found := false
		for gvk := range s.AllKnownTypes() {
			if gvk.Kind == kind {
				found = true
			}
		}
		if !found {
			t.Errorf("scheme lacks %s", kind)
		}
	}
}
