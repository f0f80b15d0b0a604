#!/usr/bin/env python3
"""scripts/kernelstrain2_reader.py, a consumer written from the trajectory format alone, reads
every kind of export blaster writes (an optimize session with an invalid reply, a compile error
and a stop; an eval; a serve session) with no special case, and refuses a row that breaks the
format.

    python3 tests/scripts/kernelstrain2_reader_test.py   (BLASTER_BINARY and BLASTER_ROOT from ctest)
"""

import importlib.util
import json
import os
import subprocess
import tempfile
import unittest

ROOT = os.environ.get("BLASTER_ROOT") or os.path.abspath(
    os.path.join(os.path.dirname(__file__), "..", ".."))
BLASTER = os.environ.get("BLASTER_BINARY") or os.path.join(ROOT, "build", "blaster")

spec = importlib.util.spec_from_file_location(
    "kernelstrain2_reader", os.path.join(ROOT, "scripts", "kernelstrain2_reader.py"))
reader = importlib.util.module_from_spec(spec)
spec.loader.exec_module(reader)


class Kernelstrain2Reader(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.home = os.path.join(self.dir.name, "home")

    def tearDown(self):
        self.dir.cleanup()

    def blaster(self, *args, stdin=None):
        return subprocess.run([BLASTER, "--home", self.home, *args], cwd=ROOT, input=stdin,
                              capture_output=True, text=True)

    def test_every_kind_of_export_reads_with_no_special_case(self):
        broken = os.path.join(self.dir.name, "broken.cu")
        with open(broken, "w") as f:
            f.write("/* blaster {} */ oops")
        replies = os.path.join(self.dir.name, "replies.txt")
        with open(replies, "w") as f:
            f.write("not json {\n")
            f.write(json.dumps({"source": "/* blaster {} */ oops", "hypothesis": "a typo"}) + "\n")
            f.write(json.dumps({"stop": True, "why": "done"}) + "\n")
        proposer = (f"exec 3< {replies}; while IFS= read -r request; do "
                    "IFS= read -r reply <&3 || exit 0; printf '%s\\n' \"$reply\"; done")
        done = self.blaster("optimize", "--task", "rmsnorm", "--steps", "5", "--no-profile",
                            "--proposer", proposer)
        self.assertEqual(done.returncode, 0, done.stderr)
        done = self.blaster("eval", "--task", "rmsnorm", "--candidate", broken, "--no-profile")
        self.assertEqual(done.returncode, 0, done.stderr)
        done = self.blaster("serve", "--task", "rmsnorm", "--no-profile",
                            stdin="{ not json\n" + json.dumps({"source": "/* blaster {} */ x"})
                            + "\n")
        self.assertEqual(done.returncode, 0, done.stderr)

        out = os.path.join(self.dir.name, "t")
        runs = json.loads(self.blaster("runs", "--json").stdout)
        session_ids = sorted(r["id"] for r in runs if r["command"].split()[1] in
                             ("optimize", "serve", "eval"))
        self.assertEqual(len(session_ids), 3, runs)
        done = self.blaster("trajectories", "export",
                            *[a for i in session_ids for a in ("--run", str(i))], "--out", out)
        self.assertEqual(done.returncode, 0, done.stderr)
        sessions = reader.read(os.path.join(out, "trajectories.jsonl"))
        self.assertEqual(len(sessions), 3)
        messages, trace = sessions[0]
        self.assertEqual([t["status"] for t in trace], ["compileerror", "compileerror"])
        self.assertEqual(messages[-1]["content"], json.dumps({"stop": True, "why": "done"}))
        self.assertEqual(self.blaster("verify", out).returncode, 0)

        # Merged into another home, the sessions export again whole, the stop line included.
        other = os.path.join(self.dir.name, "other")
        merged = subprocess.run([BLASTER, "--home", other, "merge", out], cwd=ROOT,
                                capture_output=True, text=True)
        self.assertEqual(merged.returncode, 0, merged.stderr)
        again = os.path.join(self.dir.name, "again")
        done = subprocess.run([BLASTER, "--home", other, "trajectories", "export",
                               *[a for i in session_ids for a in ("--run", str(i))], "--out",
                               again],
                              cwd=ROOT, capture_output=True, text=True)
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertEqual(reader.read(os.path.join(again, "trajectories.jsonl"))[0][0][-1],
                         messages[-1])

    def test_a_row_that_breaks_the_format_is_refused(self):
        row = {"op": "x", "impl": "cuda", "gpu": "H200", "arch": "sm90a", "dtype": "fp16",
               "shape": {}, "signature": "", "desc": "", "baseline_ms": 0.1, "best": None,
               "attempts": 1, "elapsed_s": 1.0, "elapsed_hms": "0:00:01", "num_steps": 1,
               "messages": [{"role": "system", "content": ""}, {"role": "user", "content": ""}],
               "trace": [{"tag": "t", "kind": "rewrite", "params": {"VEC": 4},
                          "status": "ok", "time": 0.05, "kept": True}]}
        reader.read_session(row, "row")
        row["trace"][0]["params"] = {"VEC": ["4"]}
        with self.assertRaisesRegex(ValueError, "params"):
            reader.read_session(row, "row")


if __name__ == "__main__":
    unittest.main()
