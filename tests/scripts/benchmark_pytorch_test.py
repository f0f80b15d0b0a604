#!/usr/bin/env python3
"""scripts/benchmark_pytorch.py without a GPU or PyTorch: every task a suite names has a PyTorch
model, and every case of every suite resolves its symbols and the shapes of its inputs.

    python3 tests/scripts/benchmark_pytorch_test.py
"""

import importlib.util
import json
import os
import tempfile
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


class Resume(unittest.TestCase):
    def write(self, content):
        f = tempfile.NamedTemporaryFile("w", suffix=".json", delete=False)
        f.write(content)
        f.close()
        self.addCleanup(os.unlink, f.name)
        return f.name

    def test_the_cases_of_this_gpu_model_are_kept(self):
        cases = [{"task": "rms_norm", "case": "t1", "methods": {}}]
        path = self.write(json.dumps({"environment": {"device": "NVIDIA H200"}, "cases": cases}))
        self.assertEqual(benchmark_pytorch.resumed_cases(path, "NVIDIA H200"), cases)

    def test_another_gpu_models_cases_are_refused(self):
        path = self.write(json.dumps({"environment": {"device": "NVIDIA H200"}, "cases": []}))
        with self.assertRaisesRegex(ValueError, "timed on NVIDIA H200, this GPU is NVIDIA H100"):
            benchmark_pytorch.resumed_cases(path, "NVIDIA H100 80GB HBM3")
        unnamed = self.write(json.dumps({"cases": []}))
        with self.assertRaisesRegex(ValueError, "an unnamed GPU"):
            benchmark_pytorch.resumed_cases(unnamed, "NVIDIA H200")

    def test_a_file_this_script_did_not_write_is_refused(self):
        for content in ("{", "[]", '{"cases": 3}'):
            with self.subTest(content=content), self.assertRaises(ValueError):
                benchmark_pytorch.resumed_cases(self.write(content), "NVIDIA H200")


if __name__ == "__main__":
    unittest.main()
