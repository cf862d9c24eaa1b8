package dev

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// describeRunningDev says where the cairn dev running in dir answers, from the dev.json
// it wrote once ready, for the refusal of a second one: the addresses to use instead, and
// what to do. It reads, and writes nothing.
func describeRunningDev(dir string) string {
	raw, err := os.ReadFile(filepath.Join(dir, devStateFile))
	var st devState
	if err != nil || json.Unmarshal(raw, &st) != nil {
		return fmt.Sprintf(" and is starting (%s appears once it is ready): wait for it, stop it with Ctrl-C, or give this one another --dir",
			filepath.Join(dir, devStateFile))
	}
	var b strings.Builder
	b.WriteString("; it answers at:\n")
	line := func(label, value string) {
		if value != "" {
			fmt.Fprintf(&b, "  %-15s%s\n", label, value)
		}
	}
	if st.FederationURL != "" {
		line("federation API", st.FederationURL+"/federation/status")
		line("public page", st.FederationURL+"/")
	}
	line("API server", st.APIServer)
	line("kubeconfig", st.Kubeconfig)
	line("webhooks", st.Webhooks)
	line("chain service", st.ChainService)
	line("manager", st.Manager)
	line("metrics", st.Metrics)
	fmt.Fprintf(&b, "use it (cairn demo --dir %s runs the demo against it), stop it with Ctrl-C, or give this one another --dir", dir)
	return b.String()
}
