#!/usr/bin/env python3
"""Build or tamper with a chain.db the way BIJOTEL 2.16 writes it (stdlib only).

An independent writer for legacydb's cross-check test, following LEGACY-BIJOTEL.md
section 1 with Python's own sqlite3, hashlib and hmac:

  bijotel_chain.py build DB N SECRET_HEX   seal N rows into a new chain.db
  bijotel_chain.py tamper DB SEQ           flip one byte of row SEQ's canonical_body
  bijotel_chain.py trim DB BEFORE_SEQ      delete rows seq < BEFORE_SEQ (as archive_chain)

Bodies are json.dumps(sort_keys=True, separators=(",", ":"), ensure_ascii=False) of dicts
with ASCII keys, ints within 2**53 and strings without control characters: on those that
equals RFC 8785 (JCS), which the original uses.
"""

import hashlib
import hmac
import os
import sys

# The schema, the pragmas and the tamper step are the re-stated original's, shared with
# make bench-compare (hack/bijotel_restated.py).
sys.dont_write_bytecode = True  # nothing written beside hack/
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "..", "hack"))
from bijotel_restated import GENESIS_HASH, SEAL_SQL, cmd_tamper, connect, init_chain_db, jcs  # noqa: E402

BASE_TIME_NS = 1781492405_123456789  # beyond 2**53: must never pass through a float


def body(i):
    end = BASE_TIME_NS + i * 1_000_000_007
    if i % 4 == 3:  # append_event: any dict, default columns
        event = {"event": "policy.deny", "n": i, "actor": "ops@example.org", "big": 2**53 - 1}
        return jcs(event), end, "0" * 32, "0" * 16, "audit.event", None
    span = {
        "name": "chat claude-sonnet-4",
        "kind": "CLIENT",
        "attributes": {
            "gen_ai.operation.name": "chat",
            "gen_ai.request.model": "claude-sonnet-4",
            "gen_ai.usage.input_tokens": 100 + i,
            "gen_ai.prompt": "Grüße, 東京 \U0001F600 \"quoted\" back\\slash #%d" % i,
        },
        "status_code": "UNSET",
        "status_description": None,
        "start_time_ns": str(end - 850_000_000),
        "end_time_ns": str(end),
    }
    return jcs(span), end, format(0xABC000 + i, "032x"), format(0x5000 + i, "016x"), span["name"], "CLIENT"


def seal(conn, secret, i):
    """_seal_canonical: read the head and insert under one RESERVED lock."""
    canonical_body, ts, trace_id, span_id, name, kind = body(i)
    canonical_hash = hashlib.sha256(canonical_body).hexdigest()
    conn.execute("BEGIN IMMEDIATE")
    row = conn.execute("SELECT hmac_hash FROM chain ORDER BY seq DESC LIMIT 1").fetchone()
    prev_hash = row[0] if row else GENESIS_HASH
    hmac_hash = hmac.new(secret, (prev_hash + canonical_hash).encode("ascii"), hashlib.sha256).hexdigest()
    semantic = hashlib.sha256(b"semantic:" + canonical_body).hexdigest() if kind else None
    conn.execute(SEAL_SQL, (ts, trace_id, span_id, name, kind, canonical_body, canonical_hash, prev_hash, hmac_hash, semantic))
    conn.execute("COMMIT")


def main(argv):
    if len(argv) == 5 and argv[1] == "build":
        conn = init_chain_db(argv[2])
        secret = bytes.fromhex(argv[4])
        for i in range(int(argv[3])):
            seal(conn, secret, i)
        conn.close()
    elif len(argv) == 4 and argv[1] == "tamper":
        cmd_tamper(argv[2], int(argv[3]))
    elif len(argv) == 4 and argv[1] == "trim":
        conn = connect(argv[2])
        conn.execute("DELETE FROM chain WHERE seq < ?", (int(argv[3]),))
        conn.execute("VACUUM")
        conn.close()
    else:
        sys.stderr.write(__doc__)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
