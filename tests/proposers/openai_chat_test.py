#!/usr/bin/env python3
"""scripts/proposers/openai_chat.py against a chat-completions server this test starts on the
loopback address: what it sends, how it reads answers, retries and failures, and a whole
`blaster optimize` session through it.

    python3 tests/proposers/openai_chat_test.py   (BLASTER_BINARY and BLASTER_ROOT from ctest)
"""

import http.server
import json
import os
import subprocess
import sys
import tempfile
import threading
import unittest

ROOT = os.environ.get("BLASTER_ROOT") or os.path.abspath(
    os.path.join(os.path.dirname(__file__), "..", ".."))
SCRIPT = os.path.join(ROOT, "scripts", "proposers", "openai_chat.py")
BASELINE = open(os.path.join(ROOT, "tasks", "rmsnorm", "init.cu")).read()


def completion(content):
    return 200, {"id": "c1", "object": "chat.completion",
                 "choices": [{"index": 0, "finish_reason": "stop",
                              "message": {"role": "assistant", "content": content}}]}


class ChatServer:
    """Answers POST /v1/chat/completions from a script of (status, body) and keeps each
    request's headers and body."""

    def __init__(self, answers):
        self.answers = list(answers)
        self.seen = []
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers["Content-Length"]))
                server.seen.append((self.path, dict(self.headers), json.loads(body)))
                status, answer = server.answers.pop(0) if server.answers else (500, {})
                data = json.dumps(answer).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args):
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


def request_line(step=3):
    return json.dumps({
        "protocol": "blaster-optimize/1", "type": "propose", "step": step,
        "steps_left": 8, "seconds_left": None,
        "task": {"name": "rmsnorm", "title": "RMSNorm over dim 1", "contract": {"name": "rmsnorm"},
                 "case": "canonical", "shape": "B=16 C=64 H=256 W=256", "dtype": "f16",
                 "baseline_source": BASELINE, "candidate_format": "FORMAT-RULES"},
        "device": {"name": "NVIDIA H200", "model": "H200",
                   "ceilings": {"dram_copy_gbs": 4200.0}},
        "baseline_us": 18000.0, "best": None,
        "in_flight": [{"step": 2, "hypothesis": "unroll by four", "tags": []}],
        "attempts": [{"step": 1, "hypothesis": "h", "tags": [], "status": "wrongresult",
                      "reason": "unwritten_output", "message": "out[17] was never written",
                      "reward": 0}],
        "memory": []})


# What the proposer needs of the environment: blaster passes only what it is told to.
VARIABLES = ["OPENAI_BASE_URL", "OPENAI_API_KEY", "OPENAI_MODEL", "PROPOSER_TIMEOUT", "NO_PROXY",
             "no_proxy"]


def env_for(server):
    env = dict(os.environ)
    env.update({"OPENAI_BASE_URL": server.url, "OPENAI_API_KEY": "test-key",
                "OPENAI_MODEL": "test-model", "PROPOSER_TIMEOUT": "10",
                "NO_PROXY": "127.0.0.1", "no_proxy": "127.0.0.1"})  # never through a proxy
    return env


def propose(server, lines):
    return subprocess.run([sys.executable, SCRIPT], input="".join(l + "\n" for l in lines),
                          capture_output=True, text=True, env=env_for(server), timeout=60)


class OpenAIChatProposer(unittest.TestCase):
    def serve(self, answers):
        server = ChatServer(answers)
        self.addCleanup(server.close)
        return server

    def test_a_request_becomes_one_chat_and_the_answer_a_candidate(self):
        server = self.serve([completion(
            "Here it is.\n```cuda\n" + BASELINE + "```\n"
            "Hypothesis: write every output once\nTags: fix, unwritten\n")])
        run = propose(server, [request_line()])
        self.assertEqual(run.returncode, 0, run.stderr)
        reply = json.loads(run.stdout)
        self.assertEqual(reply["source"], BASELINE)
        self.assertEqual(reply["hypothesis"], "write every output once")
        self.assertEqual(reply["tags"], ["fix", "unwritten"])
        path, headers, body = server.seen[0]
        self.assertEqual(path, "/v1/chat/completions")
        self.assertEqual(headers["Authorization"], "Bearer test-key")
        self.assertEqual(body["model"], "test-model")
        system, user = body["messages"]
        self.assertEqual(system["role"], "system")
        self.assertIn("FORMAT-RULES", system["content"])
        self.assertIn(BASELINE, user["content"])
        self.assertIn("out[17] was never written", user["content"])  # the feedback reaches it
        self.assertIn("Step 3", user["content"])
        # The card, its ceilings, the baseline's time and the steps still being judged too.
        self.assertIn("dram_copy_gbs", user["content"])
        self.assertIn("The baseline takes 18000.00 us", user["content"])
        self.assertIn("unroll by four", user["content"])

    def test_a_resumed_sessions_every_step_is_cut_to_the_last_few(self):
        # The first request of a resumed session carries every step so far: the prompt shows the
        # last eight, as any other request carries them, and stays the size it always was.
        request = json.loads(request_line(step=41))
        request["attempts"] = [{"step": n, "hypothesis": f"idea number {n}", "tags": [],
                                "status": "wrongresult", "reason": "wrong_result",
                                "message": "", "reward": 0} for n in range(1, 41)]
        server = self.serve([completion("```\nk\n```")])
        run = propose(server, [json.dumps(request)])
        self.assertEqual(run.returncode, 0, run.stderr)
        user = server.seen[0][2]["messages"][1]["content"]
        self.assertIn("idea number 40", user)
        self.assertIn("idea number 33", user)
        self.assertNotIn("idea number 32", user)

    def test_an_answer_without_code_is_a_reply_without_source(self):
        server = self.serve([completion("I would vectorize the loads.")])
        run = propose(server, [request_line()])
        self.assertEqual(run.returncode, 0, run.stderr)
        reply = json.loads(run.stdout)
        self.assertNotIn("source", reply)
        self.assertEqual(reply["hypothesis"], "the model answered without a code block")

    def test_a_busy_server_is_asked_again_and_a_refusal_ends_it(self):
        server = self.serve([(503, {"error": "busy"}), completion("```\nk\n```")])
        run = propose(server, [request_line()])
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertEqual(json.loads(run.stdout)["source"], "k\n")
        self.assertEqual(len(server.seen), 2)
        self.assertIn("HTTP 503", run.stderr)

        refused = self.serve([(401, {"error": "bad key"})])
        run = propose(refused, [request_line()])
        self.assertNotEqual(run.returncode, 0)
        self.assertIn("HTTP 401; giving up", run.stderr)
        self.assertEqual(run.stdout, "")

        answer = self.serve([(200, {"unexpected": True})])
        run = propose(answer, [request_line()])
        self.assertNotEqual(run.returncode, 0)
        self.assertIn("not a chat completion", run.stderr)

    def test_without_a_model_it_says_what_to_set(self):
        env = dict(os.environ)
        env.pop("OPENAI_MODEL", None)
        run = subprocess.run([sys.executable, SCRIPT], input=request_line() + "\n",
                             capture_output=True, text=True, env=env, timeout=60)
        self.assertNotEqual(run.returncode, 0)
        self.assertIn("set OPENAI_MODEL", run.stderr)

    @unittest.skipUnless(os.environ.get("BLASTER_BINARY"), "BLASTER_BINARY is not set")
    def test_a_blaster_session_through_it_is_recorded(self):
        server = self.serve([
            completion("```cuda\n" + BASELINE + "```\nHypothesis: the baseline as it is\n"
                       "Tags: baseline\n"),
            completion("no code this time")])
        with tempfile.TemporaryDirectory() as home:
            blaster = [os.environ["BLASTER_BINARY"], "--home", home, "--root", ROOT]
            run = subprocess.run(
                blaster + ["optimize", "--task", "rmsnorm", "--steps", "2", "--sessions", "2",
                           "--no-profile", "--json", "--proposer",
                           f"{sys.executable} {SCRIPT}", "--proposer-env",
                           ",".join(VARIABLES)],
                capture_output=True, text=True, env=env_for(server), timeout=600)
            # Without a GPU the session ends at the first candidate that compiled (exit 3).
            gpu = run.returncode == 0
            self.assertIn(run.returncode, (0, 3), run.stderr)
            steps = json.loads(run.stdout)["steps"]
            self.assertEqual(steps[0]["hypothesis"], "the baseline as it is")
            self.assertEqual(steps[0]["tags"], ["baseline"])
            self.assertEqual(steps[0]["status"], "ok" if gpu else "unjudged")
            if gpu:
                self.assertEqual(steps[1]["reason"], "invalid_reply")
                self.assertIn("no \"source\"", steps[1]["message"])
            memory = subprocess.run(blaster + ["memory", "--tag", "baseline", "--json"],
                                    capture_output=True, text=True, timeout=60)
            self.assertEqual(memory.returncode, 0, memory.stderr)
            self.assertEqual(len(json.loads(memory.stdout)), 1)


if __name__ == "__main__":
    unittest.main()
