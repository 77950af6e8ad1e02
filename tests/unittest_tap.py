# SPDX-License-Identifier: LGPL-2.1-or-later
"""A test module's unittest cases as TAP (meson's protocol 'tap'), one line
per case; shared by tests/grading and tests/template.

    sys.exit(unittest_tap.main(sys.modules[__name__], root=True, watchdog_s=100))
"""
import faulthandler
import os
import unittest


class Tap(unittest.TextTestResult):
    """unittest's results as TAP lines, one per test."""
    n = 0

    def line(self, ok, test, note=""):
        Tap.n += 1
        print("%s %d - %s%s" % ("ok" if ok else "not ok", Tap.n, test.id().split(".", 1)[-1],
                                note), flush=True)

    def addSuccess(self, test):
        super().addSuccess(test)
        self.line(True, test)

    def addFailure(self, test, err):
        super().addFailure(test, err)
        self.line(False, test)
        print("# " + self._exc_info_to_string(err, test).replace("\n", "\n# "))

    def addError(self, test, err):
        super().addError(test, err)
        self.line(False, test)
        print("# " + self._exc_info_to_string(err, test).replace("\n", "\n# "))

    def addSkip(self, test, reason):
        super().addSkip(test, reason)
        self.line(True, test, " # SKIP " + reason)


def main(module, root=False, watchdog_s=None):
    """Runs every case of module; 0 when all passed. root: each case fails
    (never skips) when not run as root. watchdog_s: the whole run is killed,
    with every thread's traceback, after that long."""
    if watchdog_s:
        faulthandler.dump_traceback_later(watchdog_s, exit=True)
    suite = unittest.defaultTestLoader.loadTestsFromModule(module)
    print("TAP version 13\n1..%d" % suite.countTestCases(), flush=True)
    if root and os.geteuid() != 0:
        for i in range(suite.countTestCases()):
            print("not ok %d - root required" % (i + 1))
        return 1
    runner = unittest.TextTestRunner(stream=open(os.devnull, "w"), resultclass=Tap)
    return 0 if runner.run(suite).wasSuccessful() else 1
