package analysis

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/cairn-dev/cairn/internal/analysis"
	"github.com/cairn-dev/cairn/internal/cli/cmdutil"
)

// NewEnergyCommand returns `cairn energy` and its subcommands.
func NewEnergyCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "energy",
		Short: "Estimated energy and CO2 of the chain's calls",
		Long: `Estimated energy and CO2 of the chain's calls: Wh = tokens/1000 · rate[model] and
CO2 g = Wh/1000 · intensity[region], with the documented tables (analysis.DefaultEnergyRates
and analysis.DefaultGridIntensity); unknown models use the default rate and unknown
regions world's intensity, and the output says so. Seal logs each
entry with token counts in the table energy_log; backfill adds the entries sealed
without it.`,
	}
	cmd.AddCommand(newEnergyBackfillCommand(), newEnergySummaryCommand())
	return cmd
}

// energyBackfillOptions are `cairn energy backfill`'s.
type energyBackfillOptions struct {
	cmdutil.ChainOptions
	cmdutil.NoCompletion
	cmdutil.NoValidation
}

func newEnergyBackfillCommand() *cobra.Command {
	o := &energyBackfillOptions{}
	cmd := &cobra.Command{
		Use:   "backfill",
		Short: "Log the energy of entries sealed without it; prints how many rows were added",
		Long: `Add the energy_log rows missing for entries with token counts (sealed by an older
cairn, or before the table existed), a thousand entries per transaction, so that sealing
goes on meanwhile. Running it again adds nothing. The HMAC secret is required, as for
any write to the chain's database.`,
		Args: cmdutil.NoArgs,
		Example: `  # Log the energy of the entries sealed before the energy log existed
  CAIRN_HMAC_SECRET=... cairn energy backfill --db chain.db`,
		RunE: func(cmd *cobra.Command, args []string) error { return cmdutil.Run(cmd, args, o) },
	}
	o.AddFlags(cmd)
	return cmd
}

// Run adds the missing energy_log rows and says how many.
func (o *energyBackfillOptions) Run(cmd *cobra.Command) error {
	s, err := o.Open(true)
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
}

// energySummaryOptions are `cairn energy summary`'s.
type energySummaryOptions struct {
	cmdutil.ChainOptions
	cmdutil.NoValidation
	opts                    analysis.EnergySummaryOptions
	overrides, oldOverrides map[string]string
}

func newEnergySummaryCommand() *cobra.Command {
	o := &energySummaryOptions{}
	cmd := &cobra.Command{
		Use:   "summary",
		Short: "Print the totals of the energy log as JSON, by model and by region",
		Long: `Print the totals of the energy log as JSON, in the members GET /api/energy/summary
documents: total_wh, total_co2_grams and total_calls, and by_model and by_region, objects
keyed by model and region name with wh, co2_grams and calls each. Cairn adds the tokens,
whether each model and region is known, the rates and intensities used, and how many
calls used a default. Calls whose span names no region (cloud.region) are counted in
--region; --intensity-overrides sets grid intensities (gCO2/kWh), custom regions
included. The secret is not needed.`,
		Args: cmdutil.NoArgs,
		Example: `  # Totals of the energy log, calls without a region counted in eu-west
  cairn energy summary --db chain.db --region eu-west

  # With the grid intensity of an on-premises region
  cairn energy summary --db chain.db --intensity-overrides on-prem=20`,
		RunE: func(cmd *cobra.Command, args []string) error { return cmdutil.Run(cmd, args, o) },
	}
	o.AddFlags(cmd)
	cmd.Flags().StringVar(&o.opts.DefaultRegion, "region", analysis.DefaultRegion, "grid region of the calls whose span names none (cloud.region), as cairn serve's --region; empty: world's intensity")
	cmdutil.AddIntensityOverridesFlag(cmd, &o.overrides)
	cmd.Flags().StringToStringVar(&o.oldOverrides, "intensity", nil, "the earlier name of --intensity-overrides, still accepted")
	_ = cmd.Flags().MarkHidden("intensity") // still read, for older scripts
	return cmd
}

// Complete reads the grid intensity overrides, under either name.
func (o *energySummaryOptions) Complete(*cobra.Command, []string) error {
	var err error
	if o.opts.IntensityOverrides, err = cmdutil.IntensityOverrides("--intensity-overrides", o.overrides, o.oldOverrides); err != nil {
		return cmdutil.UsageError{Err: err}
	}
	return nil
}

// Run prints the energy log's totals as JSON.
func (o *energySummaryOptions) Run(cmd *cobra.Command) error {
	s, err := o.Open(false)
	if err != nil {
		return err
	}
	defer func() { _ = s.Close() }()
	sum, err := s.EnergySummary(cmd.Context(), o.opts)
	if err != nil {
		return err
	}
	return cmdutil.WriteJSON(cmd.OutOrStdout(), sum)
}
