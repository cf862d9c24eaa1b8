package main

import (
	"fmt"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/cairn-dev/cairn/internal/analysis"
)

func newEnergyCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "energy",
		Short: "Estimated energy and CO2 of the chain's calls",
		Long: `Estimated energy and CO2 of the chain's calls: Wh = tokens/1000 · rate[model] and
CO2 g = Wh/1000 · intensity[region]. The rates are order-of-magnitude estimates; unknown
models and regions use documented fallbacks, and the output says so. Seal logs each
entry with token counts in the table energy_log; backfill adds the entries sealed
without it.`,
	}
	cmd.AddCommand(newEnergyBackfillCommand(), newEnergySummaryCommand())
	return cmd
}

func newEnergyBackfillCommand() *cobra.Command {
	var o chainOptions
	cmd := &cobra.Command{
		Use:   "backfill",
		Short: "Log the energy of entries sealed without it; prints how many rows were added",
		Long: `Add the energy_log rows missing for entries with token counts (sealed by an older
cairn, or before the table existed), a thousand entries per transaction, so that sealing
goes on meanwhile. Running it again adds nothing. The HMAC secret is required, as for
any write to the chain's database.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			s, err := o.open(true)
			if err != nil {
				return err
			}
			defer func() { _ = s.Close() }()
			added, err := s.BackfillEnergy(cmd.Context())
			if err != nil {
				return fmt.Errorf("%w (%d rows added before the failure)", err, added)
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "added %d energy_log rows\n", added)
			return err
		},
	}
	o.addFlags(cmd)
	return cmd
}

func newEnergySummaryCommand() *cobra.Command {
	var o chainOptions
	var opts analysis.EnergySummaryOptions
	var overrides map[string]string
	cmd := &cobra.Command{
		Use:   "summary",
		Short: "Print the totals of the energy log as JSON, by model and by region",
		Long: `Print the totals of the energy log as JSON: entries, tokens, Wh and CO2 g, by model
and by region, and how many entries used a fallback rate or intensity. Entries whose
span names no region (cloud.region) are counted in --region. The secret is not needed.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.IntensityOverrides = make(map[string]float64, len(overrides))
			for region, text := range overrides {
				g, err := strconv.ParseFloat(text, 64)
				if err != nil {
					return usageError{fmt.Errorf("--intensity %s=%q: not a number of gCO2/kWh", region, text)}
				}
				opts.IntensityOverrides[region] = g
			}
			if err := analysis.ValidateOverrides(opts.IntensityOverrides); err != nil {
				return usageError{fmt.Errorf("--intensity: %w", err)}
			}
			s, err := o.open(false)
			if err != nil {
				return err
			}
			defer func() { _ = s.Close() }()
			sum, err := s.EnergySummary(cmd.Context(), opts)
			if err != nil {
				return err
			}
			return writeIndentedJSON(cmd.OutOrStdout(), sum)
		},
	}
	o.addFlags(cmd)
	cmd.Flags().StringVar(&opts.DefaultRegion, "region", defaultServeRegion, "grid region of the entries whose span names none (cloud.region), as cairn serve's --region; empty: the world-average fallback")
	cmd.Flags().StringToStringVar(&overrides, "intensity", nil, "override a region's grid intensity in gCO2/kWh, e.g. us-east=200,eu-west=120")
	return cmd
}
