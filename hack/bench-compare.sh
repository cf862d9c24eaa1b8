#!/usr/bin/env bash
# Runs, in one run, Cairn's sealing, verifying and ingesting benchmarks and the original
# product's algorithm re-stated (hack/bijotel_restated.py) on the same span shapes, and
# prints each path's rates and their ratio (`make bench-compare`; docs/BENCHMARKS.md).
#
# Environment:
#   BENCH_COUNT           runs of each benchmark and of the original (default 3); the
#                         table gives the range and the ratio of the medians
#   ORIGINAL_SEAL_SPANS   spans the original seals a run, one transaction each (default
#                         20000: at about 4,000 spans/s, 200,000 would take a minute a run)
#   ORIGINAL_VERIFY_ROWS  rows of the chain the original verifies (default 200000, as
#                         cairn chain verify --full); filled in one transaction, untimed
#   BENCH_COMPARE_OUT     keep the raw outputs in this directory (default: a temporary
#                         one, removed)
set -euo pipefail
cd "$(dirname "$0")/.."

count=${BENCH_COUNT:-3}
seal_spans=${ORIGINAL_SEAL_SPANS:-20000}
verify_rows=${ORIGINAL_VERIFY_ROWS:-200000}
secret=636169726e2d636c692d62656e63682d7365637265742d33322d627974657321
if [[ -n "${BENCH_COMPARE_OUT:-}" ]]; then
	out=$BENCH_COMPARE_OUT
	mkdir -p "$out"
else
	out=$(mktemp -d)
	trap 'rm -rf "$out"' EXIT
fi
python=$(command -v python3) || { echo "bench-compare: python3 is required for the original's side" >&2; exit 1; }

echo "== bench-compare: $(date -u +%FT%TZ), $(go version | cut -d' ' -f3), $(nproc) cores, load:$(uptime | sed 's/.*load average://')"
bench() { # bench LOG PACKAGE PATTERN [SKIP]
	echo "== go test $2 -bench '$3' -count $count"
	go test "$2" -run '^$' -bench "$3" -skip "${4:-^$}" -count "$count" -timeout 60m | tee "$out/$1"
}
bench store.txt ./internal/store '^(BenchmarkSealBatched|BenchmarkVerifyFull1M)$'
bench cli.txt ./internal/cli/chain '^BenchmarkChain(SealFile|VerifyFull)$'
bench otlp.txt ./internal/otlp '^BenchmarkIngest$/^(protobuf|seal_only)$' '^BenchmarkIngest$/^protobuf$/^2_clients$'

echo "== the original re-stated: seal $seal_spans spans a run, verify $verify_rows rows"
go run ./hack/mkspans -n $((seal_spans > verify_rows ? seal_spans : verify_rows)) >"$out/spans.jsonl"
: >"$out/original.txt"
for run in $(seq "$count"); do
	rm -f "$out/seal.db"*
	"$python" hack/bijotel_restated.py seal "$out/spans.jsonl" "$out/seal.db" "$secret" "$seal_spans" | tee -a "$out/original.txt"
done
rm -f "$out/seal.db"*
"$python" hack/bijotel_restated.py fill "$out/spans.jsonl" "$out/verify.db" "$secret" "$verify_rows" >/dev/null
for run in $(seq "$count"); do
	"$python" hack/bijotel_restated.py verify "$out/verify.db" "$secret" | tee -a "$out/original.txt" | grep '^verify'
done
echo "== done, load:$(uptime | sed 's/.*load average://')"

# rates FILE NAME UNIT: the UNIT values of benchmark NAME (any -N suffix), one a line.
rates() {
	awk -v name="$2" -v unit="$3" '
		$1 == name || index($1, name "-") == 1 && substr($1, length(name) + 2) ~ /^[0-9]+$/ {
			for (i = 2; i <= NF; i++) if ($i == unit) print $(i - 1)
		}' "$1"
}
# original KIND: the original's rates of seal or verify.
original() {
	awk -v kind="$1" '$1 == kind { print $(NF - 1) }' "$out/original.txt"
}
# row LABEL CAIRN_RATES ORIGINAL_RATES: one table row.
row() {
	printf '%s\n--\n%s\n' "$2" "$3" | awk -v label="$1" '
		function k(x) { return x >= 1000 ? sprintf("%.1fk", x / 1000) : sprintf("%.0f", x) }
		function median(a, n,   i, j, t) {
			for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
			return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
		}
		function span(a, n,   i, lo, hi) {
			lo = hi = a[1]
			for (i = 2; i <= n; i++) { if (a[i] < lo) lo = a[i]; if (a[i] > hi) hi = a[i] }
			return lo == hi ? k(lo) : k(lo) "–" k(hi)
		}
		$0 == "--" { side = 1; next }
		NF { if (side) o[++no] = $1; else c[++nc] = $1 }
		END {
			if (!nc || !no) { printf "| %s | %s | %s | – |\n", label, nc ? span(c, nc) : "no result", no ? span(o, no) : "no result"; exit }
			printf "| %s | %s | %s | %.1f× |\n", label, span(c, nc), span(o, no), median(c, nc) / median(o, no)
		}'
}

seal=$(original seal)
verify=$(original verify)
echo
echo "| path | Cairn | original re-stated | ratio |"
echo "|---|---|---|---|"
row "BenchmarkSealBatched (1,000-span batches), spans/s" "$(rates "$out/store.txt" BenchmarkSealBatched spans/s)" "$seal"
row "cairn chain seal --file, 200,000 spans, spans/s" "$(rates "$out/cli.txt" BenchmarkChainSealFile spans/s)" "$seal"
row "BenchmarkVerifyFull1M, rows/s" "$(rates "$out/store.txt" BenchmarkVerifyFull1M rows/s)" "$verify"
row "cairn chain verify --full, 200,000 rows, rows/s" "$(rates "$out/cli.txt" BenchmarkChainVerifyFull rows/s)" "$verify"
row "OTLP protobuf through cairn serve (BenchmarkIngest/protobuf), spans/s" "$(rates "$out/otlp.txt" BenchmarkIngest/protobuf spans/s)" "$seal"
row "  of which the store (BenchmarkIngest/seal_only), spans/s" "$(rates "$out/otlp.txt" BenchmarkIngest/seal_only spans/s)" "$seal"
echo
echo "original: $seal_spans spans sealed a run (one transaction a span), $verify_rows rows verified; $count runs each; ratio = median ÷ median"
