package store

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"

	"github.com/cairn-dev/cairn/internal/analysis"
)

// legacyRun is the shape runs were saved in before issue 17: only the newest value of
// each dimension was tested, against the window's earlier values, and the dimensions
// were a list.
type legacyRun struct {
	ID                int64             `json:"id"`
	StartedAt         time.Time         `json:"started_at"`
	Window            int               `json:"window"`
	ZThreshold        float64           `json:"z_threshold"`
	MinBaseline       int               `json:"min_baseline"`
	EntriesConsidered int               `json:"entries_considered"`
	FirstSeq          int64             `json:"first_seq"`
	LastSeq           int64             `json:"last_seq"`
	Dimensions        []legacyDimension `json:"dimensions"`
	Flagged           bool              `json:"flagged"`
}

// legacyDimension is one dimension of a legacyRun; the figures describe the earlier
// values (the baseline), and value, at seq, is the one value tested.
type legacyDimension struct {
	Name       string   `json:"name"`
	Status     string   `json:"status"`
	N          int      `json:"n"`
	Seq        int64    `json:"seq"`
	Value      float64  `json:"value"`
	Mean       float64  `json:"mean"`
	StdDev     float64  `json:"stddev"`
	Z          *float64 `json:"z"`
	Q1         float64  `json:"q1"`
	Q3         float64  `json:"q3"`
	IQR        float64  `json:"iqr"`
	LowerFence float64  `json:"lower_fence"`
	UpperFence float64  `json:"upper_fence"`
	ZFlagged   bool     `json:"z_flagged"`
	IQRFlagged bool     `json:"iqr_flagged"`
}

// decodeRun decodes a saved run, converting one saved in the legacy shape (dimensions as
// a list): its anomaly lists hold at most the one value it tested, and its mean and
// stdev are those of the values before it.
func decodeRun(result []byte) (*analysis.Run, error) {
	var probe struct {
		Dimensions json.RawMessage `json:"dimensions"`
	}
	if err := json.Unmarshal(result, &probe); err != nil {
		return nil, fmt.Errorf("decode a run: %w", err)
	}
	if !bytes.HasPrefix(bytes.TrimSpace(probe.Dimensions), []byte("[")) {
		run := new(analysis.Run)
		if err := json.Unmarshal(result, run); err != nil {
			return nil, fmt.Errorf("decode a run: %w", err)
		}
		return run, nil
	}
	var old legacyRun
	if err := json.Unmarshal(result, &old); err != nil {
		return nil, fmt.Errorf("decode a run of the legacy shape: %w", err)
	}
	run := &analysis.Run{ID: old.ID, RanAt: old.StartedAt, Window: old.Window, ZThreshold: old.ZThreshold,
		MinValues: old.MinBaseline + 1, EntriesConsidered: old.EntriesConsidered, FirstSeq: old.FirstSeq,
		LastSeq: old.LastSeq, Dimensions: map[string]*analysis.Dimension{}, Flagged: old.Flagged}
	for _, o := range old.Dimensions {
		d := &analysis.Dimension{Mean: o.Mean, Stdev: o.StdDev, AnomaliesZ: []analysis.ZAnomaly{}, AnomaliesIQR: []analysis.IQRAnomaly{},
			Status: o.Status, N: o.N, Q1: o.Q1, Q3: o.Q3, IQR: o.IQR, LowerFence: o.LowerFence, UpperFence: o.UpperFence}
		if o.ZFlagged && o.Z != nil {
			d.AnomaliesZ = append(d.AnomaliesZ, analysis.ZAnomaly{Seq: o.Seq, Value: o.Value, Z: *o.Z})
		}
		if o.IQRFlagged {
			d.AnomaliesIQR = append(d.AnomaliesIQR, analysis.IQRAnomaly{Seq: o.Seq, Value: o.Value})
		}
		if o.ZFlagged || o.IQRFlagged {
			d.FlaggedEntries, d.Flagged = 1, true
		}
		run.Dimensions[o.Name] = d
		run.TotalAnomalies += d.FlaggedEntries
	}
	return run, nil
}
