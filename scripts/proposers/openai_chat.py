#!/usr/bin/env python3
"""A blaster optimize proposer backed by an OpenAI-compatible chat-completions endpoint.

    OPENAI_BASE_URL=https://api.example.com/v1 OPENAI_API_KEY=... OPENAI_MODEL=some-model \\
        blaster optimize --task rmsnorm --proposer 'python3 scripts/proposers/openai_chat.py' \\
        --proposer-env OPENAI_BASE_URL,OPENAI_API_KEY,OPENAI_MODEL

blaster runs its proposer in a box whose environment holds only the variables it is told to
pass (--proposer-env), so name every variable below that you set.

It speaks optimize/PROTOCOL.md: one request line in, one reply line out. Each request becomes
one stateless chat (the request already carries the best source, the recent attempts with their
feedback and the matching memory), and the model's answer becomes a candidate: the first fenced
code block is the source, a "Hypothesis:" line the hypothesis, a "Tags:" line the tags. An answer
without code is still answered, without a source, so that blaster records the step as an
invalid reply and tells the model next time. Diagnostics go to standard error (proposer.log).

Environment: OPENAI_BASE_URL (default https://api.openai.com/v1), OPENAI_API_KEY (sent as a
bearer token when set), OPENAI_MODEL (required), PROPOSER_TIMEOUT (seconds per HTTP call,
default 240, under optimize's --reply-timeout), PROPOSER_TEMPERATURE (default 0.7), and the
usual HTTPS_PROXY and NO_PROXY where the endpoint is reached through a proxy.
"""

import json
import os
import re
import sys
import time
import urllib.error
import urllib.request

SYSTEM = """You optimize one CUDA kernel for blaster, a harness that compiles your source with \
NVRTC, rejects it unless it is correct on every case of the task (outputs against a float64 \
reference, NaN/Inf, unwritten outputs, out-of-bounds writes, changed inputs, non-determinism), \
and times it against the baseline on a real GPU. Cheating is detected and scores zero.

Answer with exactly one fenced code block holding the whole .cu file (its launch plan first, in \
the candidate format below), then a line "Hypothesis: <one line: what you try and why>" and a \
line "Tags: <comma-separated words>".

Candidate format:
{candidate_format}"""

FENCE = re.compile(r"```[A-Za-z0-9_+-]*[ \t]*\n(.*?)```", re.DOTALL)
RETRIES = 3  # for 429, 5xx and network errors, with a growing pause
MAX_ATTEMPTS = 8  # attempts a prompt shows, the last ones: optimize's default --history


def log(message):
    print(f"openai_chat: {message}", file=sys.stderr, flush=True)


def prompt_of(request):
    """The user message: everything the request says, as the model should read it."""
    task = request["task"]
    parts = [
        f"Task {task['name']}: {task['title']}",
        f"Timed case: {task['case']} ({task['shape']}), {task['dtype']}.",
        "Contract (task.json):\n" + json.dumps(task["contract"], indent=1),
        "Baseline (init.cu), which every step is timed against:\n```cuda\n"
        + task["baseline_source"] + "\n```",
    ]
    if request.get("device"):
        parts.append("Device (its ceilings as blaster measured them): " +
                     json.dumps(request["device"]))
    if request.get("baseline_us") is not None:
        parts.append(f"The baseline takes {request['baseline_us']:.2f} us on it.")
    best = request.get("best")
    if best:
        best = dict(best)
        source = best.pop("source", "")
        parts.append("Best so far (its verdict, then its source):\n" + json.dumps(best) +
                     "\n```cuda\n" + source + "\n```")
    if request.get("attempts"):
        # A resumed session's first request carries every step so far: the chat takes the last
        # few, as every other request carries them, so that a long session fits its context.
        parts.append("Recent attempts with blaster's feedback, oldest first:\n" +
                     "\n".join(json.dumps(a) for a in request["attempts"][-MAX_ATTEMPTS:]))
    if request.get("memory"):
        parts.append("From earlier sessions:\n" +
                     "\n".join(json.dumps(m) for m in request["memory"]))
    if request.get("in_flight"):
        parts.append("Still being judged, their verdicts to come (propose something else):\n" +
                     "\n".join(json.dumps(s) for s in request["in_flight"]))
    parts.append(f"Step {request['step']}: propose a faster correct kernel.")
    return "\n\n".join(parts)


def chat(base_url, key, model, messages, timeout, temperature):
    body = json.dumps({"model": model, "messages": messages,
                       "temperature": temperature}).encode()
    headers = {"Content-Type": "application/json"}
    if key:
        headers["Authorization"] = f"Bearer {key}"
    url = base_url.rstrip("/") + "/chat/completions"
    for attempt in range(RETRIES + 1):
        try:
            req = urllib.request.Request(url, data=body, headers=headers, method="POST")
            with urllib.request.urlopen(req, timeout=timeout) as response:
                answer = json.load(response)
            return answer["choices"][0]["message"]["content"] or ""
        except urllib.error.HTTPError as e:
            retry = e.code == 429 or e.code >= 500
            detail = e.read(500).decode(errors="replace")
            log(f"{url}: HTTP {e.code}: {detail}")
            if not retry or attempt == RETRIES:
                raise SystemExit(f"openai_chat: {url} answered HTTP {e.code}; giving up")
        except (urllib.error.URLError, TimeoutError, ConnectionError) as e:
            log(f"{url}: {e}")
            if attempt == RETRIES:
                raise SystemExit(f"openai_chat: {url} unreachable: {e}; giving up")
        except (KeyError, IndexError, TypeError, json.JSONDecodeError) as e:
            raise SystemExit(f"openai_chat: {url} answered something that is not a chat "
                             f"completion ({e!r})")
        time.sleep(2 ** attempt)
    raise AssertionError("unreachable")


def reply_of(content):
    """The protocol reply for the model's answer."""
    reply = {"kind": "rewrite"}
    hypothesis = re.search(r"^\s*Hypothesis:\s*(.+)$", content, re.MULTILINE)
    tags = re.search(r"^\s*Tags:\s*(.+)$", content, re.MULTILINE)
    if hypothesis:
        reply["hypothesis"] = hypothesis.group(1).strip()
    if tags:
        reply["tags"] = [t.strip() for t in tags.group(1).split(",") if t.strip()][:16]
    code = FENCE.search(content)
    if code:
        reply["source"] = code.group(1)
    else:
        # No source: blaster records an invalid reply and says so in the next request.
        reply.setdefault("hypothesis", "the model answered without a code block")
    return reply


def main():
    base_url = os.environ.get("OPENAI_BASE_URL", "https://api.openai.com/v1")
    key = os.environ.get("OPENAI_API_KEY", "")
    model = os.environ.get("OPENAI_MODEL")
    if not model:
        raise SystemExit("openai_chat: set OPENAI_MODEL to the model the endpoint serves")
    timeout = float(os.environ.get("PROPOSER_TIMEOUT", "240"))
    temperature = float(os.environ.get("PROPOSER_TEMPERATURE", "0.7"))
    for line in sys.stdin:
        request = json.loads(line)
        system = SYSTEM.format(candidate_format=request["task"]["candidate_format"])
        content = chat(base_url, key, model,
                       [{"role": "system", "content": system},
                        {"role": "user", "content": prompt_of(request)}],
                       timeout, temperature)
        print(json.dumps(reply_of(content)), flush=True)


if __name__ == "__main__":
    main()
