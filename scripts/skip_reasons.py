#!/usr/bin/env python3
"""Each test that ctest skipped, with the reason it gave: ctest's summary says only "(Skipped)",
and the reason is in the test's output (GoogleTest's GTEST_SKIP message, or what a script that
exits with its SKIP_RETURN_CODE printed last).

    python3 scripts/skip_reasons.py JUNIT.xml    # from ctest --output-junit JUNIT.xml

Prints one line per skipped test, "  NAME: reason", after a heading; nothing when none was
skipped. scripts/test.sh runs it after ctest.
"""

import sys
import xml.etree.ElementTree as ElementTree


def reason_of(output):
    """GoogleTest prints "FILE:LINE: Skipped", the message, then "[  SKIPPED ] NAME"; any other
    test's reason is its last line of output."""
    lines = [line.strip() for line in output.splitlines()]
    for i, line in enumerate(lines):
        if line.endswith(": Skipped"):
            words = []
            for after in lines[i + 1:]:
                if after.startswith("[  SKIPPED ]"):
                    break
                if after:
                    words.append(after)
            if words:
                return " ".join(words)
    said = [line for line in lines if line]
    return said[-1] if said else "no reason given"


def skipped(junit):
    """(name, reason) of each test the JUnit file of ctest marks skipped, in its order."""
    out = []
    for case in ElementTree.parse(junit).getroot().iter("testcase"):
        if case.find("skipped") is None:
            continue
        output = case.findtext("system-out") or ""
        out.append((case.get("name", "?"), reason_of(output)))
    return out


def main(argv):
    if len(argv) != 2:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    tests = skipped(argv[1])
    if tests:
        print(f"Skipped, and why ({len(tests)}):")
        for name, reason in tests:
            print(f"  {name}: {reason}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
