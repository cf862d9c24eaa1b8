package cmdutil

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cairn-dev/cairn/internal/analysis"
)

// AddIntensityOverridesFlag adds --intensity-overrides, read into overrides: cairn serve
// and cairn energy summary take it.
func AddIntensityOverridesFlag(cmd *cobra.Command, overrides *map[string]string) {
	cmd.Flags().StringToStringVar(overrides, "intensity-overrides", nil,
		"grid intensities in gCO2/kWh by region, over the built-in table (custom regions too), e.g. us-east=200,on-prem=20")
}

// IntensityOverrides reads the region=gCO2/kWh values of flag (and of its older names)
// into grid intensity overrides, keys lowercased. It refuses a value that is not a
// number, a region given twice with two values and what analysis.ValidateOverrides
// refuses.
func IntensityOverrides(flag string, values ...map[string]string) (map[string]float64, error) {
	out := map[string]float64{}
	for _, m := range values {
		for region, text := range m {
			g, err := strconv.ParseFloat(strings.TrimSpace(text), 64)
			if err != nil {
				return nil, fmt.Errorf("%s %s=%q: not a number of gCO2/kWh", flag, region, text)
			}
			key := strings.ToLower(strings.TrimSpace(region))
			if prev, ok := out[key]; ok && prev != g {
				return nil, fmt.Errorf("%s: region %q is given twice, as %v and %v gCO2/kWh", flag, key, prev, g)
			}
			out[key] = g
		}
	}
	if err := analysis.ValidateOverrides(out); err != nil {
		return nil, fmt.Errorf("%s: %w", flag, err)
	}
	return out, nil
}
