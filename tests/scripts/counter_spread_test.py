#!/usr/bin/env python3
"""scripts/counter_spread.py on `blaster --json profile` outputs: CUPTI's range over the runs,
ncu's value beside it, and the counters where ncu lies outside that range by more than --over.

    python3 tests/scripts/counter_spread_test.py
"""

import json
import os
import pathlib
import subprocess
import sys
import tempfile
import unittest

ROOT = pathlib.Path(os.environ.get("BLASTER_ROOT") or
                    pathlib.Path(__file__).resolve().parent.parent.parent)
SCRIPT = ROOT / "scripts" / "counter_spread.py"


def report(counters, ncu=None):
    """A profile report of one variant and kernel, as `blaster --json profile` writes it."""
    diagnostics = {"counters": {"kernels": [{"kernel": "rows", "counters": counters}]}}
    if ncu is not None:
        diagnostics["ncu"] = {"kernels": [{"kernel": "rows", "counters": ncu}]}
    return {"results": [{"variant": "rmsnorm_vec_regs[VEC=4,BLOCK=128]",
                         "diagnostics": diagnostics}]}


class CounterSpread(unittest.TestCase):
    def run_script(self, runs, ncu, *extra):
        with tempfile.TemporaryDirectory() as folder:
            paths = []
            for i, r in enumerate(runs + [ncu]):
                path = pathlib.Path(folder) / f"{i}.json"
                path.write_text(json.dumps(r))
                paths.append(str(path))
            return subprocess.run([sys.executable, str(SCRIPT), *paths[:-1], "--ncu", paths[-1],
                                   *extra], capture_output=True, text=True, check=False)

    def test_ncu_inside_cuptis_range_is_not_flagged_and_outside_is(self):
        runs = [report({"lg_throttle": 1.65, "dram_bytes": 1000.0}),
                report({"lg_throttle": 1.75, "dram_bytes": 1001.0})]
        # lg_throttle: ncu 1.70 lies inside [1.65, 1.75]; dram_bytes: 1100 lies 10% above.
        ncu = report({}, ncu={"lg_throttle": 1.70, "dram_bytes": 1100.0})
        done = self.run_script(runs, ncu)
        self.assertEqual(done.returncode, 0, done.stderr)
        lines = done.stdout.splitlines()
        flagged = [line for line in lines if line.endswith("<-")]
        self.assertEqual(len(flagged), 1, done.stdout)
        self.assertIn("dram_bytes", flagged[0])
        self.assertIn("1 of 2 counters", lines[-1])
        self.assertIn("over 2 processes", lines[-1])
        # The spread of lg_throttle over the runs: 1.75 / 1.65 - 1 = 6.06%.
        self.assertIn("6.06%", next(line for line in lines if "lg_throttle" in line))

    def test_a_wider_allowance_flags_nothing(self):
        runs = [report({"x": 1.0}), report({"x": 1.0})]
        ncu = report({}, ncu={"x": 1.04})
        done = self.run_script(runs, ncu, "--over", "0.05")
        self.assertNotIn("<-", done.stdout)
        self.assertIn("0 of 1 counters", done.stdout)

    def test_one_run_is_refused(self):
        done = self.run_script([report({"x": 1.0})], report({}, ncu={"x": 1.0}))
        self.assertEqual(done.returncode, 2)
        self.assertIn("two runs at least", done.stderr)

    def test_a_file_that_is_not_json_is_named(self):
        with tempfile.TemporaryDirectory() as folder:
            bad = pathlib.Path(folder) / "bad.json"
            bad.write_text("not json")
            done = subprocess.run([sys.executable, str(SCRIPT), str(bad), str(bad), "--ncu",
                                   str(bad)], capture_output=True, text=True, check=False)
        self.assertNotEqual(done.returncode, 0)
        self.assertIn("bad.json", done.stderr)


if __name__ == "__main__":
    unittest.main()
