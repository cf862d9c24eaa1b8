package browsertest

import (
	"context"
	"fmt"
	"testing"

	"github.com/chromedp/chromedp"
)

// PaintTiming is what the page's Performance API says about its load, in milliseconds
// since navigation start. A zero means the browser reported no such entry.
type PaintTiming struct {
	FirstPaint            float64 `json:"firstPaint"`
	FirstContentfulPaint  float64 `json:"firstContentfulPaint"`
	DOMInteractive        float64 `json:"domInteractive"`
	DOMContentLoadedEnd   float64 `json:"domContentLoadedEventEnd"`
	LoadEventEnd          float64 `json:"loadEventEnd"`
	TransferSizeBytes     float64 `json:"transferSize"`
	ResourceCount         int     `json:"resources"`
	ResourceTransferBytes float64 `json:"resourceTransferSize"`
}

// String formats the timing for a log line or BENCHMARKS.
func (p PaintTiming) String() string {
	return fmt.Sprintf("first paint %.0f ms, first contentful paint %.0f ms, DOM interactive %.0f ms, "+
		"DOMContentLoaded end %.0f ms, load end %.0f ms, %d resources",
		p.FirstPaint, p.FirstContentfulPaint, p.DOMInteractive, p.DOMContentLoadedEnd, p.LoadEventEnd, p.ResourceCount)
}

// timingScript waits (up to 5 s) for the first contentful paint and the load event,
// then reads performance.getEntriesByType.
const timingScript = `new Promise(resolve => {
  const start = Date.now();
  const read = () => {
    const paint = {};
    for (const e of performance.getEntriesByType('paint')) paint[e.name] = e.startTime;
    const nav = performance.getEntriesByType('navigation')[0] || {};
    const res = performance.getEntriesByType('resource');
    return {
      firstPaint: paint['first-paint'] || 0,
      firstContentfulPaint: paint['first-contentful-paint'] || 0,
      domInteractive: nav.domInteractive || 0,
      domContentLoadedEventEnd: nav.domContentLoadedEventEnd || 0,
      loadEventEnd: nav.loadEventEnd || 0,
      transferSize: nav.transferSize || 0,
      resources: res.length,
      resourceTransferSize: res.reduce((n, e) => n + (e.transferSize || 0), 0),
    };
  };
  const poll = () => {
    const t = read();
    if ((t.firstContentfulPaint > 0 && t.loadEventEnd > 0) || Date.now() - start > 5000) resolve(t);
    else setTimeout(poll, 20);
  };
  poll();
})`

// Timing reads the paint and navigation timing of the page ctx (after it loaded), for
// the numbers in BENCHMARKS.
func (b *Browser) Timing(t testing.TB, ctx context.Context) PaintTiming {
	t.Helper()
	return Get(t, b, ctx, chromedp.Evaluate[PaintTiming](timingScript, chromedp.EvalAwaitPromise))
}
