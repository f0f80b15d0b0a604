#!/usr/bin/env python3
"""scripts/skip_reasons.py on ctest's JUnit output: each skipped test is named with its reason,
GoogleTest's message or a script's last line, and a test that ran is not named.

    python3 tests/scripts/skip_reasons_test.py
"""

import os
import pathlib
import subprocess
import sys
import tempfile
import unittest

ROOT = pathlib.Path(os.environ.get("BLASTER_ROOT") or
                    pathlib.Path(__file__).resolve().parent.parent.parent)
SCRIPT = ROOT / "scripts" / "skip_reasons.py"

# As ctest 3.25 writes it for a GoogleTest skip, a SKIP_RETURN_CODE skip and a test that passed.
JUNIT = """<?xml version="1.0" encoding="UTF-8"?>
<testsuite name="blaster" tests="3" failures="0" disabled="0" skipped="2" hostname="" time="0">
	<testcase name="BlasterGpu.BenchTimesRmsnorm" classname="BlasterGpu.BenchTimesRmsnorm"
	          time="0.01" status="notrun">
		<skipped message="SKIP_REGULAR_EXPRESSION_MATCHED"/>
		<system-out>Running main() from ./googletest/src/gtest_main.cc
[ RUN      ] BlasterGpu.BenchTimesRmsnorm
/work/tests/gpu/bench_rmsnorm_test.cpp:12: Skipped
needs a GPU: no CUDA driver on this machine (libcuda.so.1: cannot open shared object file)
[  SKIPPED ] BlasterGpu.BenchTimesRmsnorm (0 ms)
[  SKIPPED ] 1 test, listed below:
[  SKIPPED ] BlasterGpu.BenchTimesRmsnorm
</system-out>
	</testcase>
	<testcase name="Slurm.Shards" classname="Slurm.Shards" time="0.2" status="notrun">
		<skipped message="SKIP_RETURN_CODE=77"/>
		<system-out>checking for slurmctld
slurm is not installed here
</system-out>
	</testcase>
	<testcase name="Store.Opens" classname="Store.Opens" time="0.3" status="run">
		<system-out>[  PASSED  ] 1 test.</system-out>
	</testcase>
</testsuite>
"""


class SkipReasons(unittest.TestCase):
    def run_script(self, text):
        with tempfile.TemporaryDirectory() as folder:
            junit = pathlib.Path(folder) / "junit.xml"
            junit.write_text(text)
            return subprocess.run([sys.executable, str(SCRIPT), str(junit)],
                                  capture_output=True, text=True, check=True).stdout

    def test_each_skipped_test_is_named_with_its_reason(self):
        lines = self.run_script(JUNIT).splitlines()
        self.assertEqual(lines, [
            "Skipped, and why (2):",
            "  BlasterGpu.BenchTimesRmsnorm: needs a GPU: no CUDA driver on this machine "
            "(libcuda.so.1: cannot open shared object file)",
            "  Slurm.Shards: slurm is not installed here",
        ])

    def test_nothing_is_printed_when_nothing_was_skipped(self):
        self.assertEqual(self.run_script(JUNIT.replace(
            '<skipped message="SKIP_RETURN_CODE=77"/>', "").replace(
            '<skipped message="SKIP_REGULAR_EXPRESSION_MATCHED"/>', "")), "")

    def test_test_sh_prints_them_after_ctest(self):
        text = (ROOT / "scripts" / "test.sh").read_text()
        self.assertIn("--output-junit", text)
        self.assertIn("skip_reasons.py", text)


if __name__ == "__main__":
    unittest.main()
