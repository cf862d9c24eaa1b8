"""Unit tests of cairn_replay (unittest, standard library only).

Run: python3 -m unittest -v test_cairn_replay   (from this directory)
make test runs them through python_test.go. The byte-for-byte comparison with the Go
helpers is crosscheck_test.go's.
"""

import base64
import hashlib
import json
import math
import unittest

import cairn_replay as cr

PROMPT = "What is the capital of France?"
OUTPUT = "The capital of France is Paris."
# The hashes docs/API.md shows for seq 3 of its example chain.
PROMPT_HASH = "115049a298532be2f181edb03f766770c0db84c22aff39003fec340deaec7545"
OUTPUT_HASH = "a1b7eb2ee7a6aded8dda4e6cf30826f5afffb28a5597ee9389e91eb326d4e319"


def entry_of(attrs, seq=1, **extra):
    body = {"attributes": attrs, "kind": "client", "name": "chat"}
    body.update(extra)
    raw = json.dumps(body, ensure_ascii=False).encode("utf-8")
    return {"seq": seq, "canonical_body_b64": base64.b64encode(raw).decode("ascii")}


class RecordReplayContextTest(unittest.TestCase):
    def test_documented_set_with_a_seed(self):
        got = cr.record_replay_context(PROMPT, OUTPUT, "gpt-4o", seed=42, temperature=0, top_p=1,
                                       model_version="gpt-4o-2024-08-06")
        self.assertEqual(got, {
            "cairn.replay.prompt_hash": PROMPT_HASH,
            "cairn.replay.output_hash": OUTPUT_HASH,
            "cairn.replay.seed": 42,
            "cairn.replay.temperature": 0.0,
            "cairn.replay.top_p": 1.0,
            "cairn.replay.model_version": "gpt-4o-2024-08-06",
            "cairn.replay.deterministic": True,
        })
        self.assertIs(type(got["cairn.replay.temperature"]), float)

    def test_deterministic_exactly_when_a_seed_is_given(self):
        without = cr.record_replay_context("p", "o", "m")
        self.assertIs(without["cairn.replay.deterministic"], False)
        self.assertNotIn("cairn.replay.seed", without)
        zero = cr.record_replay_context("p", "o", "m", seed=0)
        self.assertIs(zero["cairn.replay.deterministic"], True)
        self.assertEqual(zero["cairn.replay.seed"], 0)
        self.assertEqual(without["cairn.replay.model_version"], "m")
        self.assertEqual(cr.record_replay_context("p", "o", "m", model_version="")["cairn.replay.model_version"], "m")

    def test_numbers_json_cannot_hold_are_strings(self):
        big = cr.record_replay_context("p", "o", "m", seed=2**53, temperature=float("nan"), top_p=float("inf"))
        self.assertEqual(big["cairn.replay.seed"], "9007199254740992")
        self.assertEqual(big["cairn.replay.temperature"], "NaN")
        self.assertEqual(big["cairn.replay.top_p"], "+Inf")
        self.assertEqual(cr.record_replay_context("p", "o", "m", seed=2**53 - 1)["cairn.replay.seed"], 2**53 - 1)
        self.assertEqual(cr.record_replay_context("p", "o", "m", temperature=-1e20)["cairn.replay.temperature"],
                         "-100000000000000000000")
        # The shortest digits, as Go's FormatFloat(f, 'f', -1, 64) writes them.
        self.assertEqual(cr.record_replay_context("p", "o", "m", top_p=1.2345678901234567e19)["cairn.replay.top_p"],
                         "12345678901234567000")
        self.assertEqual(cr.record_replay_context("p", "o", "m", top_p=2.0**53)["cairn.replay.top_p"],
                         "9007199254740992")
        self.assertEqual(cr.record_replay_context("p", "o", "m", top_p=1e21)["cairn.replay.top_p"], 1e21)

    def test_unicode_and_messages(self):
        got = cr.record_replay_context("caf\u00e9 \U0001f600", "", "m")
        self.assertEqual(got["cairn.replay.prompt_hash"], hashlib.sha256("caf\u00e9 \U0001f600".encode()).hexdigest())
        self.assertEqual(got["cairn.replay.output_hash"], hashlib.sha256(b"").hexdigest())
        messages = [{"role": "user", "content": "h\u00e9llo"}]
        want = hashlib.sha256('[{"content":"h\u00e9llo","role":"user"}]'.encode()).hexdigest()
        self.assertEqual(cr.record_replay_context(messages, "o", "m")["cairn.replay.prompt_hash"], want)

    def test_bad_arguments_are_refused(self):
        for kwargs, exc in [
            (dict(prompt=1, output="o", model="m"), TypeError),
            (dict(prompt="p", output=None, model="m"), TypeError),
            (dict(prompt="p", output="o", model=None), TypeError),
            (dict(prompt="p", output="o", model="m", seed=True), TypeError),
            (dict(prompt="p", output="o", model="m", seed=1.0), TypeError),
            (dict(prompt="p", output="o", model="m", seed=2**63), ValueError),
            (dict(prompt="p", output="o", model="m", temperature="0.1"), TypeError),
            (dict(prompt="p", output="o", model="m", top_p=10**400), ValueError),
            (dict(prompt="\ud800", output="o", model="m"), ValueError),
        ]:
            with self.subTest(kwargs=kwargs), self.assertRaises(exc):
                cr.record_replay_context(**kwargs)


class VerifyReplayTest(unittest.TestCase):
    def test_match_and_mismatches(self):
        attrs = cr.record_replay_context(PROMPT, OUTPUT, "gpt-4o", seed=42, model_version="gpt-4o-2024-08-06")
        attrs["gen_ai.request.model"] = "gpt-4o"
        entry = entry_of(attrs, seq=3)
        ok = cr.verify_replay(entry, OUTPUT)
        self.assertEqual(ok.to_dict(), {
            "match": True, "original_hash": OUTPUT_HASH, "replay_hash": OUTPUT_HASH, "deterministic": True,
            "model_version": "gpt-4o-2024-08-06", "reason": None, "seq": 3, "reason_code": "match",
            "model": "gpt-4o"})
        self.assertEqual(list(ok.to_dict()), ["match", "original_hash", "replay_hash", "deterministic",
                                              "model_version", "reason", "seq", "reason_code", "model"])
        bad = cr.verify_replay(entry, "The capital of France is Lyon.")
        self.assertEqual(bad.reason_code, cr.REASON_OUTPUT_MISMATCH)
        self.assertIn("('gpt-4o-2024-08-06')", bad.reason)
        self.assertFalse(bad.match)
        drift = cr.verify_replay(entry_of(cr.record_replay_context("p", "o", "m")), "other")
        self.assertEqual(drift.reason_code, cr.REASON_NONDETERMINISTIC_MISMATCH)
        self.assertEqual(drift.reason, "output hash mismatch \u2014 original call did not record a seed "
                                       "(deterministic=false); replay drift is expected")
        self.assertTrue(cr.verify_replay(entry, OUTPUT.encode()).match)

    def test_the_original_products_names(self):
        entry = entry_of({"bijotel.replay.output_hash": OUTPUT_HASH, "bijotel.replay.seed": 7,
                          "bijotel.replay.model_version": "v1"})
        r = cr.verify_replay(entry, "x")
        self.assertEqual((r.reason_code, r.deterministic, r.model_version),
                         (cr.REASON_OUTPUT_MISMATCH, True, "v1"))

    def test_two_names_with_different_values_conflict(self):
        entry = entry_of({"cairn.replay.output_hash": OUTPUT_HASH, "bijotel.replay.output_hash": "0" * 64})
        for out in (OUTPUT, "0"):
            r = cr.verify_replay(entry, out)
            self.assertEqual(r.reason_code, cr.REASON_CONFLICTING_REPLAY_CONTEXT)
            self.assertIsNone(r.original_hash)
        same = entry_of({"cairn.replay.output_hash": OUTPUT_HASH, "cairn.replay.temperature": 1,
                         "bijotel.replay.temperature": 1.0})
        self.assertTrue(cr.verify_replay(same, OUTPUT).match)
        flag = entry_of({"cairn.replay.output_hash": OUTPUT_HASH, "cairn.replay.deterministic": True,
                         "bijotel.replay.deterministic": 1})
        self.assertEqual(cr.verify_replay(flag, OUTPUT).reason_code, cr.REASON_CONFLICTING_REPLAY_CONTEXT)

    def test_never_raises(self):
        odd_entries = [
            None, 1, "x", b"{}", [], object(), {}, {"seq": "3"}, {"canonical_body": None},
            {"canonical_body": b"\xff\xfe"}, {"canonical_body": "{"}, {"canonical_body": "null"},
            {"canonical_body": '{"attributes":null}'}, {"canonical_body": '{"attributes":[1]}'},
            {"canonical_body": '{"attributes":{}}'}, {"canonical_body_b64": "!!!"}, {"canonical_body_b64": 5},
            {"canonical_body": "[" * 100000 + "]" * 100000}, {"canonical_body": '{"attributes":{"a":NaN}}'},
            {"canonical_body": '{"attributes":{"cairn.replay.output_hash":null}}'},
            {"canonical_body": '{"attributes":{"cairn.replay.output_hash":"%s","cairn.replay.deterministic":null}}'
                               % OUTPUT_HASH},
            {"canonical_body": '{"attributes":{"cairn.replay.output_hash":"%s"}}' % OUTPUT_HASH.upper()},
            {"seq": 2**70, "canonical_body": '{"attributes":{"cairn.replay.output_hash":1e999}}'},
        ]
        for entry in odd_entries:
            for out in ("x", b"x", None, 3, "\ud800"):
                with self.subTest(entry=repr(entry)[:60], out=out):
                    r = cr.verify_replay(entry, out)
                    self.assertIsInstance(r, cr.ReplayResult)
                    self.assertFalse(r.match)
                    self.assertIn(r.reason_code, {cr.REASON_MALFORMED_ENTRY, cr.REASON_NO_REPLAY_CONTEXT,
                                                  cr.REASON_MALFORMED_REPLAY})
                    self.assertTrue(r.reason)
                    json.dumps(r.to_dict())

    def test_malformed_replay_is_reported(self):
        r = cr.verify_replay(entry_of({"cairn.replay.output_hash": OUTPUT_HASH}, seq=9), None)
        self.assertEqual((r.reason_code, r.seq, r.replay_hash), (cr.REASON_MALFORMED_REPLAY, 9, ""))

    def test_a_chain_row_verifies_like_an_export_entry(self):
        attrs = cr.record_replay_context("p", "o", "m", seed=1)
        raw = json.dumps({"attributes": attrs}).encode()
        a = cr.verify_replay({"seq": 5, "canonical_body": raw}, "o").to_dict()
        b = cr.verify_replay({"seq": 5, "canonical_body": raw.decode()}, "o").to_dict()
        c = cr.verify_replay({"seq": 5, "canonical_body_b64": base64.b64encode(raw).decode()}, "o").to_dict()
        self.assertEqual(a, b)
        self.assertEqual(a, c)
        self.assertTrue(a["match"])


if __name__ == "__main__":
    unittest.main()
