#!/usr/bin/env python3
"""The original product's (BIJOTEL 2.16) chain algorithm, re-stated: the baseline of
`make bench-compare` (stdlib only: sqlite3, hashlib, hmac, json).

Written from LEGACY-BIJOTEL.md sections 1.1 and 1.3-1.5: the original's schema and
pragmas, its canonical body (RFC 8785 JSON of name, kind, attributes, status and times),
canonical_hash, the HMAC over the 128 hex characters of prev_hash and canonical_hash, one
BEGIN IMMEDIATE transaction a span that reads the head and inserts, and verify_chain over
every row. Spans come from a JSON Lines file in `cairn chain seal`'s format (go run
./hack/mkspans); they are read and parsed before the clock starts, as the original gets
them from the OpenTelemetry SDK in memory.

Bodies are json.dumps(sort_keys=True, separators=(",", ":"), ensure_ascii=False): for
ASCII keys, integers within 2**53 and strings (what mkspans writes) that equals RFC 8785,
which the original computes with the rfc8785 package.

  bijotel_restated.py seal SPANS DB SECRET_HEX [N]    seal the first N spans (all by
                                                      default) into a new DB, one
                                                      transaction a span; print spans/s
  bijotel_restated.py fill SPANS DB SECRET_HEX [N]    the same rows in one transaction:
                                                      builds a chain to verify, quickly
                                                      (not the original's write path)
  bijotel_restated.py verify DB SECRET_HEX            verify_chain over every row; print
                                                      rows/s, or exit 3 at the first broken
  bijotel_restated.py tamper DB SEQ                   flip one byte of row SEQ's body
  bijotel_restated.py smoke SPANS DB SECRET_HEX [N]   seal N (200) spans, then verify them

Results go to standard output as one line each, "seal N spans S s R spans/s",
"verify N rows S s R rows/s", "head SEQ HMAC_HASH"; a broken chain prints
"BROKEN at seq=S: reason" and exits 3.
"""

import hashlib
import hmac
import json
import os
import sqlite3
import sys
import time

GENESIS_HASH = "0" * 64

SCHEMA = """
CREATE TABLE IF NOT EXISTS chain (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    timestamp_ns INTEGER NOT NULL,
    trace_id TEXT NOT NULL,
    span_id TEXT NOT NULL,
    span_name TEXT NOT NULL,
    span_kind TEXT,
    canonical_body BLOB NOT NULL,
    canonical_hash TEXT NOT NULL,
    prev_hash TEXT NOT NULL,
    hmac_hash TEXT NOT NULL,
    semantic_body_hash TEXT
);
CREATE INDEX IF NOT EXISTS idx_chain_trace  ON chain(trace_id);
CREATE INDEX IF NOT EXISTS idx_chain_semhash ON chain(semantic_body_hash);
"""

# Attributes the semantic (CAS) body leaves out, besides the times and the status.
SEMANTIC_SKIP = frozenset(
    [
        "gen_ai.output.messages",
        "gen_ai.response.id",
        "gen_ai.response.model",
        "gen_ai.response.finish_reasons",
        "gen_ai.response.finish_reason",
        "gen_ai.response.time_to_first_chunk",
        "gen_ai.usage.input_tokens",
        "gen_ai.usage.output_tokens",
        "gen_ai.usage.total_tokens",
        "gen_ai.usage.cache_read.input_tokens",
        "gen_ai.usage.cache_creation.input_tokens",
        "gen_ai.usage.reasoning.output_tokens",
    ]
)

# Attributes whose string value the original parses as JSON and embeds.
PARSED_ATTRIBUTES = ("gen_ai.input.messages", "gen_ai.output.messages", "gen_ai.tool.definitions")

SEAL_SQL = (
    "INSERT INTO chain (timestamp_ns, trace_id, span_id, span_name, span_kind, canonical_body,"
    " canonical_hash, prev_hash, hmac_hash, semantic_body_hash) VALUES (?,?,?,?,?,?,?,?,?,?)"
)


def connect(path):
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA busy_timeout=5000")
    return conn


def init_chain_db(path):
    """_init_chain_db: busy_timeout, WAL, the DDL in one BEGIN IMMEDIATE, chmod 0600."""
    conn = connect(path)
    if conn.execute("PRAGMA journal_mode").fetchone()[0].lower() != "wal":
        conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("BEGIN IMMEDIATE")
    for stmt in SCHEMA.split(";"):
        if stmt.strip():
            conn.execute(stmt)
    conn.execute("COMMIT")
    os.chmod(path, 0o600)
    return conn


def jcs(obj):
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def load_spans(path, n):
    """Reads the first n spans (all when n is None) of a cairn-seal JSON Lines file."""
    spans = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            if n is not None and len(spans) == n:
                break
            if line.strip():
                spans.append(json.loads(line))
    return spans


def span_to_dict(span):
    """span_to_dict: the original's body members, from a cairn-seal line."""
    attributes = dict(span.get("attributes") or {})
    for key in PARSED_ATTRIBUTES:
        if isinstance(attributes.get(key), str):
            try:
                attributes[key] = json.loads(attributes[key])
            except ValueError:
                pass
    return {
        "name": span["name"],
        "kind": (span.get("kind") or "").upper() or None,
        "attributes": attributes,
        "status_code": span.get("status_code") or None,
        "status_description": span.get("status_description") or None,
        "start_time_ns": str(span["start_time_ns"]),
        "end_time_ns": str(span["end_time_ns"]),
    }


def semantic_hash(body):
    semantic = {k: v for k, v in body.items() if k not in ("start_time_ns", "end_time_ns", "status_code", "status_description")}
    semantic["attributes"] = {k: v for k, v in body["attributes"].items() if k not in SEMANTIC_SKIP}
    return hashlib.sha256(jcs(semantic)).hexdigest()


def row_of(span, secret, prev_hash):
    """The row the original writes for span after prev_hash (_seal_canonical's values)."""
    body = span_to_dict(span)
    canonical_body = jcs(body)
    canonical_hash = hashlib.sha256(canonical_body).hexdigest()
    hmac_hash = hmac.new(secret, (prev_hash + canonical_hash).encode("ascii"), hashlib.sha256).hexdigest()
    return (
        int(span["end_time_ns"]),
        span["trace_id"],
        span["span_id"],
        body["name"],
        body["kind"],
        canonical_body,
        canonical_hash,
        prev_hash,
        hmac_hash,
        semantic_hash(body),
    )


def seal(conn, secret, span):
    """_seal_canonical: read the head and insert under one RESERVED lock, a span at a time."""
    conn.execute("BEGIN IMMEDIATE")
    head = conn.execute("SELECT hmac_hash FROM chain ORDER BY seq DESC LIMIT 1").fetchone()
    row = row_of(span, secret, head[0] if head else GENESIS_HASH)
    conn.execute(SEAL_SQL, row)
    conn.execute("COMMIT")


def cmd_seal(spans_path, db, secret_hex, n=None):
    spans = load_spans(spans_path, n)
    secret = bytes.fromhex(secret_hex)
    conn = init_chain_db(db)
    start = time.perf_counter()
    for span in spans:
        seal(conn, secret, span)
    elapsed = time.perf_counter() - start
    conn.close()
    print("seal %d spans %.3f s %.0f spans/s" % (len(spans), elapsed, len(spans) / elapsed))


def cmd_fill(spans_path, db, secret_hex, n=None):
    spans = load_spans(spans_path, n)
    secret = bytes.fromhex(secret_hex)
    conn = init_chain_db(db)
    conn.execute("BEGIN IMMEDIATE")
    prev_hash = GENESIS_HASH
    for span in spans:
        row = row_of(span, secret, prev_hash)
        conn.execute(SEAL_SQL, row)
        prev_hash = row[8]
    conn.execute("COMMIT")
    conn.close()
    print("fill %d spans" % len(spans))


def verify_chain(conn, secret):
    """verify_chain over every row (no window; trim-aware start): (valid, seq, reason, rows)."""
    first = conn.execute("SELECT MIN(seq) FROM chain").fetchone()[0]
    start = 1 if first is None or first <= 1 else first
    if start <= 1:
        expected = GENESIS_HASH
    else:
        pred = conn.execute("SELECT hmac_hash FROM chain WHERE seq = ?", (start - 1,)).fetchone()
        expected = pred[0] if pred else conn.execute("SELECT prev_hash FROM chain WHERE seq = ?", (start,)).fetchone()[0]
    last, rows = None, 0
    cur = conn.execute(
        "SELECT seq, canonical_body, canonical_hash, prev_hash, hmac_hash FROM chain WHERE seq >= ? ORDER BY seq", (start,)
    )
    for seq, body, canonical_hash, prev_hash, hmac_hash in cur:
        rows += 1
        if hashlib.sha256(body).hexdigest() != canonical_hash:
            return False, seq, "canonical_hash mismatch (body mutated)", rows
        if prev_hash != expected:
            return False, seq, "prev_hash mismatch (chain broken)", rows
        want = hmac.new(secret, (prev_hash + canonical_hash).encode("ascii"), hashlib.sha256).hexdigest()
        if not hmac.compare_digest(want, hmac_hash):
            return False, seq, "hmac_hash mismatch (secret wrong or hmac mutated)", rows
        expected, last = hmac_hash, seq
    return True, last, None, rows


def cmd_verify(db, secret_hex):
    conn = connect(db)
    start = time.perf_counter()
    valid, seq, reason, rows = verify_chain(conn, bytes.fromhex(secret_hex))
    elapsed = time.perf_counter() - start
    if not valid:
        print("BROKEN at seq=%d: %s" % (seq, reason))
        return 3
    head = conn.execute("SELECT seq, hmac_hash FROM chain ORDER BY seq DESC LIMIT 1").fetchone()
    conn.close()
    print("verify %d rows %.3f s %.0f rows/s" % (rows, elapsed, rows / elapsed if elapsed else 0))
    if head:
        print("head %d %s" % head)
    return 0


def cmd_tamper(db, seq):
    conn = connect(db)
    body = bytearray(conn.execute("SELECT canonical_body FROM chain WHERE seq = ?", (seq,)).fetchone()[0])
    body[len(body) // 2] ^= 1
    conn.execute("UPDATE chain SET canonical_body = ? WHERE seq = ?", (bytes(body), seq))
    conn.close()


def main(argv):
    args = argv[1:]
    if len(args) in (4, 5) and args[0] in ("seal", "fill", "smoke"):
        n = int(args[4]) if len(args) == 5 else (200 if args[0] == "smoke" else None)
        if args[0] == "fill":
            cmd_fill(args[1], args[2], args[3], n)
            return 0
        cmd_seal(args[1], args[2], args[3], n)
        return cmd_verify(args[2], args[3]) if args[0] == "smoke" else 0
    if len(args) == 3 and args[0] == "verify":
        return cmd_verify(args[1], args[2])
    if len(args) == 3 and args[0] == "tamper":
        cmd_tamper(args[1], int(args[2]))
        return 0
    sys.stderr.write(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
