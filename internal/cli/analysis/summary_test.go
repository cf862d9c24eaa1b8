package analysis

import (
	"reflect"
	"testing"

	"github.com/cairn-dev/cairn/internal/analysis"
)

// TestSampleSeqsKeepTheNewest: a dimension with more flagged entries than the line shows
// lists its newest ones.
func TestSampleSeqsKeepTheNewest(t *testing.T) {
	d := &analysis.Dimension{FlaggedEntries: 7, Flagged: true}
	for seq := int64(1); seq <= 7; seq++ {
		d.AnomaliesIQR = append(d.AnomaliesIQR, analysis.IQRAnomaly{Seq: seq * 10})
	}
	sum := summarizeRun(&analysis.Run{Dimensions: map[string]*analysis.Dimension{analysis.DimLatencyMS: d}, TotalAnomalies: 7})
	if got := sum.SampleSeqs[analysis.DimLatencyMS]; !reflect.DeepEqual(got, []int64{30, 40, 50, 60, 70}) || sum.Anomalies[analysis.DimLatencyMS] != 7 {
		t.Errorf("sample %v, anomalies %v", got, sum.Anomalies)
	}
}
