package controllers

import (
	"errors"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	fv1 "github.com/cairn-dev/cairn/api/v1alpha1"
	"github.com/cairn-dev/cairn/internal/tlog"
)

// The federation's Prometheus metrics, served with controller-runtime's on the manager's
// metrics endpoint.
var (
	anchorsTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "cairn_anchors_total",
		Help: "Cross-anchors created, by federation.",
	}, []string{"namespace", "federation"})

	pendingGauge = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "cairn_pending_submissions",
		Help: "Accepted submissions waiting for a cross-anchor, by federation.",
	}, []string{"namespace", "federation"})

	logUploadSeconds = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "cairn_log_upload_duration_seconds",
		Help:    "Time to upload a record to the transparency log and get its proof, by outcome (ok, unavailable, refused).",
		Buckets: prometheus.ExponentialBuckets(0.01, 2, 14), // 10 ms to about 80 s
	}, []string{"outcome"})

	logUploadFailures = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "cairn_log_upload_failures_total",
		Help: "Failed uploads to the transparency log, by outcome (unavailable, refused).",
	}, []string{"outcome"})

	submissionsTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "cairn_submissions_total",
		Help: "Submissions given a verdict, by result (accepted, rejected) and reason.",
	}, []string{"result", "reason"})
)

func init() {
	metrics.Registry.MustRegister(anchorsTotal, pendingGauge, logUploadSeconds, logUploadFailures, submissionsTotal)
}

// observeUpload records one upload's latency and outcome.
func observeUpload(start time.Time, err error) {
	outcome := "ok"
	switch {
	case errors.Is(err, tlog.ErrRefused):
		outcome = "refused"
	case err != nil:
		outcome = "unavailable"
	}
	logUploadSeconds.WithLabelValues(outcome).Observe(time.Since(start).Seconds())
	if err != nil {
		logUploadFailures.WithLabelValues(outcome).Inc()
	}
}

// countVerdict records a submission's verdict.
func countVerdict(reason string) {
	result := "rejected"
	if reason == fv1.ReasonVerified {
		result = "accepted"
	}
	submissionsTotal.WithLabelValues(result, reason).Inc()
}
