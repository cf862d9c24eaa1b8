"""Runs cairn_replay on the cases crosscheck_test.go sends on stdin and prints the results.

Input: {"record": [{"prompt", "output", "model", "seed", "temperature", "top_p",
"model_version"}], "verify": [{"seq", "body_b64" (null: no entry), "output_b64"}]}, numbers
for temperature and top_p as text (an integer's text is passed as an int). Output:
{"record": [attributes], "verify": [ReplayResult.to_dict()]}.
"""

import base64
import json
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import cairn_replay  # noqa: E402


def number(text):
    return int(text) if re.fullmatch(r"-?[0-9]+", text) else float(text)


def main():
    cases = json.load(sys.stdin)
    record = []
    for c in cases["record"]:
        record.append(cairn_replay.record_replay_context(
            c["prompt"], c["output"], c["model"], seed=c["seed"],
            temperature=number(c["temperature"]), top_p=number(c["top_p"]),
            model_version=c["model_version"]))
    verify = []
    for c in cases["verify"]:
        out = base64.b64decode(c["output_b64"])
        try:
            out = out.decode("utf-8")  # a str where it is one, to test that path too
        except UnicodeDecodeError:
            pass
        entry = None if c["body_b64"] is None else {"seq": c["seq"], "canonical_body_b64": c["body_b64"]}
        verify.append(cairn_replay.verify_replay(entry, out).to_dict())
    json.dump({"record": record, "verify": verify}, sys.stdout, allow_nan=False)


if __name__ == "__main__":
    main()
