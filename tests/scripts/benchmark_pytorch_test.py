#!/usr/bin/env python3
"""scripts/benchmark_pytorch.py without a GPU or PyTorch: every task a suite names has a PyTorch
model, and every case of every suite resolves its symbols and the shapes of its inputs.

    python3 tests/scripts/benchmark_pytorch_test.py
"""

import importlib.util
import json
import os
import unittest

ROOT = os.environ.get("BLASTER_ROOT") or os.path.abspath(
    os.path.join(os.path.dirname(__file__), "..", ".."))
SCRIPT = os.path.join(ROOT, "scripts", "benchmark_pytorch.py")

spec = importlib.util.spec_from_file_location("benchmark_pytorch", SCRIPT)
benchmark_pytorch = importlib.util.module_from_spec(spec)
spec.loader.exec_module(benchmark_pytorch)

SUITES = sorted(f[:-5] for f in os.listdir(os.path.join(ROOT, "portfolio", "suites"))
                if f.endswith(".json"))


class EverySuite(unittest.TestCase):
    def test_the_suites_are_found(self):
        self.assertIn("core10", SUITES)
        self.assertIn("infer", SUITES)

    def test_every_task_has_a_model_and_every_input_a_shape(self):
        for suite in SUITES:
            for _, task, case, symbols in benchmark_pytorch.suite_cases(suite):
                with self.subTest(suite=suite, task=task["name"], case=case["name"]):
                    self.assertIn(task["name"], benchmark_pytorch.MODELS)
                    for name, buffer in task["buffers"].items():
                        shape = [benchmark_pytorch.evaluate(d, symbols) for d in buffer["shape"]]
                        self.assertTrue(all(n > 0 for n in shape), (name, shape))
                        self.assertIn(buffer["dtype"], benchmark_pytorch.DTYPES
                                      if buffer["role"] == "input" else
                                      list(benchmark_pytorch.DTYPES) + ["fp8_e4m3"])

    def test_every_integer_range_resolves_its_bounds(self):
        # Bounds may be expressions of the case's symbols ("C", "NB - 1"), the low one too.
        for suite in SUITES:
            for _, task, case, symbols in benchmark_pytorch.suite_cases(suite):
                for name, buffer in task["buffers"].items():
                    init = buffer.get("init", {})
                    if init.get("dist") != "int_range":
                        continue
                    with self.subTest(suite=suite, task=task["name"], case=case["name"],
                                      buffer=name):
                        low = benchmark_pytorch.evaluate(init["low"], symbols)
                        high = benchmark_pytorch.evaluate(init["high"], symbols)
                        self.assertLessEqual(low, high)

    def test_case_mode_is_the_one_the_suite_times_the_case_in(self):
        modes = {(task["name"], case["name"]): benchmark_pytorch.timed_modes(["case"], item, case)
                 for item, task, case, _ in benchmark_pytorch.suite_cases("infer")}
        self.assertEqual(modes[("rms_norm", "t1")], ["graph"])  # the case says graph
        self.assertEqual(modes[("rms_norm", "t8192")], ["hot"])  # nothing says: hot
        item, case = {"case": "t1", "mode": "cold"}, {"name": "t1", "mode": "graph"}
        self.assertEqual(benchmark_pytorch.timed_modes(["case", "hot"], item, case),
                         ["cold", "hot"])  # the suite entry's mode wins over the case's
        self.assertEqual(benchmark_pytorch.timed_modes(["hot", "case"], {}, {}), ["hot"])

    def test_an_unknown_shape_word_is_refused(self):
        with self.assertRaises(ValueError):
            benchmark_pytorch.evaluate("__import__('os')", {"T": 1})


if __name__ == "__main__":
    unittest.main()
