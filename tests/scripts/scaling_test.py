#!/usr/bin/env python3
"""scripts/scaling.py without a GPU: a stand-in for blaster writes each side's bundle, and the
comparison must find the ratio of cases per hour and every case that disagrees.

    python3 tests/scripts/scaling_test.py
"""

import json
import os
import pathlib
import stat
import subprocess
import sys
import tempfile
import textwrap
import unittest

ROOT = pathlib.Path(os.environ.get("BLASTER_ROOT") or
                    pathlib.Path(__file__).resolve().parent.parent.parent)
SCRIPT = ROOT / "scripts" / "scaling.py"

# Writes results.json to --out as a portfolio would: one row per case of --suite, each case
# taking SECONDS / (GPUs named) of wall time, and the speedups SPEEDUPS gives for that many GPUs.
FAKE = textwrap.dedent("""\
    #!/usr/bin/env python3
    import json, pathlib, sys, time
    args = sys.argv[1:]
    value = lambda flag: args[args.index(flag) + 1]
    gpus = value("--gpus").split(",")
    suite = json.loads(pathlib.Path(value("--suite")).read_text())
    speedups = json.loads(pathlib.Path(__file__).with_name("speedups.json").read_text())
    rows = []
    for entry in suite["entries"]:
        for case in entry["cases"]:
            time.sleep(0.3 / len(gpus))
            s = speedups[str(len(gpus))].get(entry["task"], 2.0)
            rows.append({"task": entry["task"], "case": case["case"],
                         "best": {"variant": "v", "verdict": "improved", "speedup": s,
                                  "speedup_low": s * 0.98, "speedup_high": s * 1.02}})
    out = pathlib.Path(value("--out"))
    out.mkdir(parents=True)
    (out / "results.json").write_text(json.dumps({"device": {"name": "Fake GPU"}, "rows": rows}))
    """)


class Scaling(unittest.TestCase):
    def setUp(self):
        self.dir = pathlib.Path(tempfile.mkdtemp(prefix="blaster-scaling-test-"))
        self.blaster = self.dir / "fake-blaster"
        self.blaster.write_text(FAKE)
        self.blaster.chmod(self.blaster.stat().st_mode | stat.S_IEXEC)

    def scaling(self, speedups, *extra):
        (self.dir / "speedups.json").write_text(json.dumps(speedups))
        work = self.dir / f"work{len(list(self.dir.iterdir()))}"
        return subprocess.run(
            [sys.executable, str(SCRIPT), "--suite", "core10", "--canonical", "--work", str(work),
             "--blaster", str(self.blaster), "--json-out", str(work / "scaling.json"), *extra],
            capture_output=True, text=True), work

    def test_two_gpus_doing_the_same_cases_in_half_the_time_meet_the_goal(self):
        done, work = self.scaling({"1": {}, "2": {}})
        self.assertEqual(done.returncode, 0, done.stdout + done.stderr)
        report = json.loads((work / "scaling.json").read_text())
        self.assertGreater(report["ratio"], 1.6)
        self.assertEqual([s["cases"] for s in report["sides"]], [10, 10])
        self.assertTrue(all(c["agrees"] for c in report["cases"]))
        # Only canonical cases, one per core10 entry.
        cut = json.loads((work / "core10-canonical.json").read_text())
        self.assertEqual(len(cut["entries"]), 10)
        self.assertTrue(all([c["case"] for c in e["cases"]] == ["canonical"]
                            for e in cut["entries"]))
        self.assertIn("| 0,1 |", done.stdout)

    def test_a_speedup_outside_the_other_sides_interval_is_named(self):
        done, work = self.scaling({"1": {}, "2": {"relu": 2.2}})
        self.assertEqual(done.returncode, 1, done.stdout + done.stderr)
        report = json.loads((work / "scaling.json").read_text())
        disagree = [c["case"] for c in report["cases"] if not c["agrees"]]
        self.assertEqual(disagree, ["relu/canonical"])
        self.assertIn("| relu/canonical |", done.stdout)
        self.assertIn("| NO |", done.stdout)

    def test_a_goal_the_ratio_misses_fails(self):
        done, _ = self.scaling({"1": {}, "2": {}}, "--goal", "3")
        self.assertEqual(done.returncode, 1, done.stdout + done.stderr)
        self.assertIn("missed", done.stdout)

    def test_one_gpu_is_not_a_comparison(self):
        done, _ = self.scaling({"1": {}}, "--gpus", "0")
        self.assertNotEqual(done.returncode, 0)
        self.assertIn("at least two", done.stderr)


if __name__ == "__main__":
    unittest.main()
