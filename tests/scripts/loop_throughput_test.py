#!/usr/bin/env python3
"""scripts/loop_throughput.py without a GPU: the candidate it pins is one variant that compiles,
its proposer sends the same source (or a new one each step with --fresh), and a machine with no
GPU gets blaster's reason, not a traceback.

    python3 tests/scripts/loop_throughput_test.py   (BLASTER_BINARY and BLASTER_ROOT from ctest)
"""

import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import unittest

ROOT = os.environ.get("BLASTER_ROOT") or os.path.abspath(
    os.path.join(os.path.dirname(__file__), "..", ".."))
BLASTER = os.environ.get("BLASTER_BINARY") or os.path.join(ROOT, "build", "blaster")
SCRIPT = os.path.join(ROOT, "scripts", "loop_throughput.py")
CANDIDATE = os.path.join(ROOT, "kernels", "rmsnorm", "rmsnorm_vec_regs.cu")

def read(path):
    with open(path) as f:
        return f.read()


spec = importlib.util.spec_from_file_location("loop_throughput", SCRIPT)
loop_throughput = importlib.util.module_from_spec(spec)
spec.loader.exec_module(loop_throughput)


def gpu_present():
    done = subprocess.run([BLASTER, "doctor", "--json"], capture_output=True, text=True)
    return done.returncode == 0 and json.loads(done.stdout).get("gpu") is not None


class LoopThroughput(unittest.TestCase):
    def test_the_pinned_candidate_is_one_variant_that_compiles(self):
        source = loop_throughput.pinned(read(CANDIDATE))
        with tempfile.TemporaryDirectory() as scratch:
            path = os.path.join(scratch, "pinned.cu")
            with open(path, "w") as f:
                f.write(source)
            done = subprocess.run([BLASTER, "--root", ROOT, "--home", os.path.join(scratch, "h"),
                                   "compile", "--task", "rmsnorm", "--candidate", path, "--json"],
                                  capture_output=True, text=True)
        self.assertEqual(done.returncode, 0, done.stderr)
        variants = [r for r in json.loads(done.stdout)["results"] if not r.get("baseline")]
        self.assertEqual([r["variant"] for r in variants], ["pinned[VEC=4,BLOCK=128]"])
        self.assertEqual(variants[0]["status"], "compiled")

    def test_the_proposer_repeats_its_source_unless_fresh(self):
        with tempfile.TemporaryDirectory() as scratch:
            path = os.path.join(scratch, "k.cu")
            with open(path, "w") as f:
                f.write(read(CANDIDATE))
            replies = {}
            for fresh in (False, True):
                command = [sys.executable, SCRIPT, "--propose", path] + (["--fresh"] if fresh else [])
                done = subprocess.run(command, input="{}\n{}\n", capture_output=True, text=True)
                self.assertEqual(done.returncode, 0, done.stderr)
                replies[fresh] = [json.loads(line)["source"] for line in done.stdout.splitlines()]
        self.assertEqual(len(replies[False]), 2)
        self.assertEqual(replies[False][0], replies[False][1])
        self.assertNotEqual(replies[True][0], replies[True][1])

    def test_without_a_gpu_it_says_why(self):
        if gpu_present():
            self.skipTest("a GPU is present: the measurement itself runs (scripts/test.sh --gpu-only)")
        done = subprocess.run([sys.executable, SCRIPT, "--blaster", BLASTER, "--root", ROOT,
                               "--steps", "2"], capture_output=True, text=True, cwd=ROOT)
        self.assertNotEqual(done.returncode, 0)
        self.assertIn("GPU", done.stderr)
        self.assertNotIn("Traceback", done.stderr)


if __name__ == "__main__":
    unittest.main()
