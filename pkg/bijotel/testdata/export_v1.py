"""Write a bijotel-chain-v1 export as BIJOTEL 2.16's export_chain does (LEGACY-BIJOTEL.md
section 2), from rows given as JSON on standard input, to standard output.

Standard library only. It recomputes every hash from the bodies and the secret, so the Go
writer's bytes are compared with the original's algorithm, not with Go's own values.

Input: {"secret_hex", "created_at_us" (microseconds since the epoch), "first_prev_hash",
"rows": [{"seq", "timestamp_ns", "trace_id", "span_id", "span_name", "span_kind",
"body_b64", "semantic_body_hash"}], "segment": null | {"total_in_full_chain"}}
"""
import base64
import datetime
import hashlib
import hmac
import json
import sys

GENESIS_HASH = "0" * 64


def main():
    spec = json.load(sys.stdin)
    secret = bytes.fromhex(spec["secret_hex"])
    created = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc) + datetime.timedelta(
        microseconds=spec["created_at_us"])
    prev = spec["first_prev_hash"]
    entries = []
    for r in spec["rows"]:
        body = base64.b64decode(r["body_b64"], validate=True)
        canonical_hash = hashlib.sha256(body).hexdigest()
        hmac_hash = hmac.new(secret, (prev + canonical_hash).encode("ascii"), hashlib.sha256).hexdigest()
        entries.append({
            "seq": r["seq"],
            "timestamp_ns": r["timestamp_ns"],
            "trace_id": r["trace_id"],
            "span_id": r["span_id"],
            "span_name": r["span_name"],
            "span_kind": r["span_kind"],
            "canonical_body_b64": base64.b64encode(body).decode("ascii"),
            "canonical_hash": canonical_hash,
            "semantic_body_hash": r["semantic_body_hash"],
            "prev_hash": prev,
            "hmac_hash": hmac_hash,
        })
        prev = hmac_hash
    head_hash = entries[-1]["hmac_hash"] if entries else GENESIS_HASH
    chain_signature = hmac.new(
        secret, f"chain:{head_hash}:{len(entries)}".encode("ascii"), hashlib.sha256).hexdigest()
    payload = {
        "version": "1.0",
        "format": "bijotel-chain-v1",
        "created_at": created.isoformat(),
        "entries_count": len(entries),
        "head_hash": head_hash,
        "chain_signature": chain_signature,
        "entries": entries,
    }
    if spec["segment"] is not None and entries:
        first_seq, last_seq = entries[0]["seq"], entries[-1]["seq"]
        total = spec["segment"]["total_in_full_chain"]
        payload["segment"] = {
            "first_seq": first_seq,
            "last_seq": last_seq,
            "total_in_segment": len(entries),
            "total_in_full_chain": total,
            "boundary_prev_hash": entries[0]["prev_hash"],
            "is_complete_chain": first_seq == 1 and last_seq == total,
        }
    sys.stdout.write(json.dumps(payload, indent=2))


if __name__ == "__main__":
    main()
