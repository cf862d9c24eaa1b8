#!/usr/bin/env python3
"""Seal a model call with its replay context through cairn serve, then check replays of it.

1. Builds the replay attributes of one chat call with cairn_replay.record_replay_context
   (a seed, so the call is deterministic).
2. Sends the span to cairn serve over OTLP/HTTP JSON (POST /v1/traces), as any
   OpenTelemetry SDK would.
3. Finds the entry the span became and asks POST /api/replay/verify about two replays:
   the same output (a match) and another one (a mismatch the seed makes suspicious).
4. Checks the same entry locally with cairn_replay.verify_replay, which must agree.

Standard library only. Start a server first (CAIRN_HMAC_SECRET set):

    cairn serve --db chain.db
    python3 python/examples/replay_over_otlp.py --url http://127.0.0.1:8080

--api-key (or CAIRN_API_KEY) when the server has one; --json prints one JSON document.
Exit status: 0 when the server and the local check both report the match and the
mismatch, 1 when they do not, 2 when the server could not be used.
"""

import argparse
import base64
import json
import os
import sys
import time
import urllib.error
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from cairn_replay import record_replay_context, verify_replay  # noqa: E402

PROMPT = "What is the capital of France?"
OUTPUT = "The capital of France is Paris."
OTHER_OUTPUT = "The capital of France is Lyon."
MODEL = "gpt-4o"
MODEL_VERSION = "gpt-4o-2024-08-06"
SEED = 42


class ServerError(Exception):
    pass


class Client:
    def __init__(self, url, api_key):
        self.url = url.rstrip("/")
        self.api_key = api_key

    def call(self, method, path, body=None):
        data = None if body is None else json.dumps(body).encode("utf-8")
        req = urllib.request.Request(self.url + path, data=data, method=method)
        req.add_header("Accept", "application/json")
        if data is not None:
            req.add_header("Content-Type", "application/json")
        if self.api_key:
            req.add_header("Authorization", "Bearer " + self.api_key)
        try:
            with urllib.request.urlopen(req, timeout=30) as resp:
                return json.load(resp)
        except urllib.error.HTTPError as e:
            # Errors are {"error": code, "message": text}.
            try:
                err = json.load(e)
                what = f"{err.get('error')}: {err.get('message')}"
            except ValueError:
                what = e.reason
            raise ServerError(f"{method} {path}: HTTP {e.code} {what}") from None
        except (urllib.error.URLError, OSError) as e:
            raise ServerError(f"{method} {path}: {e}") from None


def otlp_value(v):
    """An OTLP JSON AnyValue (64-bit integers as strings)."""
    if isinstance(v, bool):
        return {"boolValue": v}
    if isinstance(v, int):
        return {"intValue": str(v)}
    if isinstance(v, float):
        return {"doubleValue": v}
    return {"stringValue": str(v)}


def otlp_request(trace_id, span_id, attributes):
    now = time.time_ns()
    span = {
        "traceId": trace_id,
        "spanId": span_id,
        "name": "chat " + MODEL,
        "kind": 3,  # SPAN_KIND_CLIENT
        "startTimeUnixNano": str(now - 850_000_000),
        "endTimeUnixNano": str(now),
        "attributes": [{"key": k, "value": otlp_value(v)} for k, v in attributes.items()],
        "status": {"code": 1},  # STATUS_CODE_OK
    }
    return {"resourceSpans": [{
        "resource": {"attributes": [{"key": "service.name", "value": {"stringValue": "replay-example"}}]},
        "scopeSpans": [{"scope": {"name": "cairn-replay-example"}, "spans": [span]}],
    }]}


def find_seq(client, span_id):
    """The seq of the entry holding span_id, searched from the chain's end."""
    total = client.call("GET", "/api/chain?limit=1")["total"]
    offset = total
    while offset > 0:
        offset = max(0, offset - 100)
        page = client.call("GET", f"/api/chain?limit=100&offset={offset}")
        for e in page["entries"]:
            if e["span_id"] == span_id:
                return e["seq"]
    raise ServerError(f"no entry holds span {span_id}")


def run(client):
    replay = record_replay_context(PROMPT, OUTPUT, MODEL, seed=SEED, temperature=0.0, top_p=1.0,
                                   model_version=MODEL_VERSION)
    attributes = {
        "gen_ai.operation.name": "chat",
        "gen_ai.request.model": MODEL,
        "gen_ai.usage.input_tokens": 14,
        "gen_ai.usage.output_tokens": 8,
    }
    attributes.update(replay)
    trace_id, span_id = os.urandom(16).hex(), os.urandom(8).hex()
    answer = client.call("POST", "/v1/traces", otlp_request(trace_id, span_id, attributes))
    rejected = int((answer or {}).get("partialSuccess", {}).get("rejectedSpans", 0) or 0)
    if rejected:
        raise ServerError(f"the server rejected the span: {answer['partialSuccess'].get('errorMessage')}")
    seq = find_seq(client, span_id)
    entry = client.call("GET", f"/api/chain/{seq}")
    same = client.call("POST", "/api/replay/verify", {"seq": seq, "replayed_output": OUTPUT})
    other = client.call("POST", "/api/replay/verify", {"seq": seq, "replayed_output": OTHER_OUTPUT})
    local_same = verify_replay(entry, OUTPUT).to_dict()
    local_other = verify_replay(entry, OTHER_OUTPUT).to_dict()
    sealed = json.loads(base64.b64decode(entry["canonical_body_b64"]))["attributes"]
    return {
        "seq": seq,
        "trace_id": trace_id,
        "span_id": span_id,
        "replay_attributes": replay,
        "sealed_replay_attributes": {k: v for k, v in sealed.items() if k.startswith("cairn.replay.")},
        "same": same,
        "other": other,
        "local_same": local_same,
        "local_other": local_other,
        "agree": local_same == same and local_other == other,
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--url", default="http://127.0.0.1:8080", help="cairn serve's base URL")
    ap.add_argument("--api-key", default=os.environ.get("CAIRN_API_KEY", ""), help="the server's API key, if any")
    ap.add_argument("--json", action="store_true", help="print one JSON document")
    args = ap.parse_args()
    try:
        report = run(Client(args.url, args.api_key))
    except ServerError as e:
        print(f"replay example: {e}", file=sys.stderr)
        return 2
    ok = report["same"]["match"] and not report["other"]["match"] and report["agree"]
    if args.json:
        json.dump(report, sys.stdout, indent=2, ensure_ascii=False)
        print()
        return 0 if ok else 1
    same, other = report["same"], report["other"]
    print(f"sealed span {report['span_id']} as seq {report['seq']}")
    print(f"replay of the same output:   match={same['match']} ({same['reason_code']})")
    print(f"replay of another output:    match={other['match']} ({other['reason_code']}): {other['reason']}")
    print("local verify_replay agrees with the server" if report["agree"] else
          "local verify_replay DISAGREES with the server")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
