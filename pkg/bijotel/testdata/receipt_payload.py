"""Print the bytes bijotel-federation 0.3.0 signs for a receipt (LEGACY-BIJOTEL.md section
3.5 step 7), from the receipt JSON on standard input. Standard library only."""
import json
import sys

r = json.load(sys.stdin)
payload = json.dumps({
    "anchor_id": r["anchor_id"],
    "anchored_at": r["anchored_at"],
    "cross_anchor_hash": r["cross_anchor_hash"],
    "federation_public_key_pem": r["federation_public_key_pem"],
    "participating_operators": r["participating_operators"],
    "rekor_log_index": r.get("rekor_log_index"),
    "rekor_url": r.get("rekor_url"),
}, sort_keys=True, separators=(",", ":")).encode("utf-8")
sys.stdout.buffer.write(payload)
