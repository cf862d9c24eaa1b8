package browsertest

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/chromedp/chromedp"
)

// The browser runs with two traps (see [New]). Its own services (network time, the
// component updater, spelling dictionaries, account checks, push messaging) use the
// default browser context, whose proxy is the service trap: what reaches it is logged,
// not failed, because no page asked for it. The pages run in a browser context of their
// own whose proxy is the page trap, and anything reaching that trap fails the test.
// Which services a build runs differs from build to build, so the split does not
// depend on them; the flags and preferences below only make the log shorter.

// disabledFeatures are the Chromium features that call home by themselves.
const disabledFeatures = "Translate,NetworkTimeServiceQuerying,AutofillServerCommunication," +
	"OptimizationHints,OptimizationHintsFetching,OptimizationGuideModelDownloading,MediaRouter," +
	"DialMediaRouteProvider,InterestFeedContentSuggestions,CertificateTransparencyComponentUpdater"

// serviceURLFlags are the switches that name a Google service's address (some take an
// origin only); each is pointed at the service trap, so a service that runs anyway is
// recorded there, as "POST (service URL)/ListAccounts".
var serviceURLFlags = []string{
	"gaia-url", "lso-url", "google-apis-url", "oauth-account-manager-url", "google-base-url",
	"gcm-checkin-url", "gcm-registration-url", "sync-url", "variations-server-url",
	"optimization-guide-service-get-hints-url", "optimization-guide-service-get-models-url",
	"search-provider-logo-url", "autofill-server-url",
}

// allocatorOptions are the flags Chromium runs with: headless, the given profile, every
// service it can do without switched off, and no network but loopback. Chromium never
// sends loopback (127.0.0.1, localhost, [::1]) through a proxy, so the pages' servers are
// reached directly, while every other host, over HTTP, HTTPS (CONNECT) or WebSocket, goes
// to a trap. The host resolver answers NOTFOUND for every name but loopback, so no DNS
// query (prefetch or otherwise) leaves the machine, and QUIC and non-proxied WebRTC UDP
// are off. Its temporary files (shared memory, its singleton socket) go to tmp, which
// outlives it: killed, as every test's browser is, Chromium leaves them behind.
func allocatorOptions(bin, profile, tmp, serviceTrap string) []chromedp.ExecAllocatorOption {
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(bin),
		chromedp.UserDataDir(profile),
		chromedp.Env("TMPDIR="+tmp),
		chromedp.DisableGPU,
		chromedp.WindowSize(1280, 1000),
		chromedp.ProxyServer(serviceTrap),
		chromedp.Flag("host-resolver-rules", "MAP * ~NOTFOUND, EXCLUDE 127.0.0.1, EXCLUDE localhost, EXCLUDE [::1]"),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("dns-prefetch-disable", true),
		chromedp.Flag("force-webrtc-ip-handling-policy", "disable_non_proxied_udp"),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-domain-reliability", true),
		chromedp.Flag("disable-field-trial-config", true),
		chromedp.Flag("no-pings", true),
		chromedp.Flag("disable-features", disabledFeatures),
		chromedp.Flag("component-updater", "url-source="+serviceTrap+"/component-updater/"),
	)
	for _, name := range serviceURLFlags {
		opts = append(opts, chromedp.Flag(name, serviceTrap+"/"))
	}
	if os.Geteuid() == 0 {
		opts = append(opts, chromedp.NoSandbox) // Chromium refuses to run sandboxed as root
	}
	return opts
}

// quietPreferences is the profile's Preferences file: what a user would switch off in
// the settings, switched off before the first start. Without it Chromium fetches a
// spelling dictionary for the locale and checks for signed-in accounts at start.
const quietPreferences = `{
  "browser": {"enable_spellchecking": false, "check_default_browser": false},
  "spellcheck": {"dictionaries": [], "dictionary": "", "use_spelling_service": false},
  "translate": {"enabled": false},
  "safebrowsing": {"enabled": false, "enhanced": false},
  "search": {"suggest_enabled": false},
  "net": {"network_prediction_options": 2},
  "signin": {"allowed": false, "allowed_on_next_startup": false},
  "alternate_error_pages": {"enabled": false},
  "url_keyed_anonymized_data_collection": {"enabled": false},
  "credentials_enable_service": false,
  "autofill": {"profile_enabled": false, "credit_card_enabled": false},
  "media_router": {"enable_media_router": false}
}
`

// writeProfile writes the preferences into the profile directory's Default profile,
// which Chromium then starts with.
func writeProfile(t testing.TB, profile string) {
	t.Helper()
	dir := filepath.Join(profile, "Default")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatalf("browser profile: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "Preferences"), []byte(quietPreferences), 0o600); err != nil {
		t.Fatalf("browser profile: %v", err)
	}
}
