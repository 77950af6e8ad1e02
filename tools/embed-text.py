#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Build step: a text file as a C string, so the daemon carries it (the env
template's program, python/openenvd_template.py) and nothing is looked up
at run time.

    embed-text.py INPUT OUTPUT NAME    ->  const char NAME[] = "...";
"""
import sys


def c_literal(text):
    out = []
    for line in text.splitlines(keepends=True):
        esc = "".join(c if 32 <= ord(c) < 127 and c not in '"\\?' else
                      "\\%03o" % ord(c) if ord(c) < 128 else c
                      for c in line)
        out.append('        "%s"' % esc)
    return "\n".join(out) or '        ""'


def main(src, dst, name):
    with open(src, encoding="utf-8") as f:
        text = f.read()
    if "\0" in text:
        sys.exit("embed-text: %s holds a NUL byte" % src)
    with open(dst, "w", encoding="utf-8") as f:
        f.write("/* Generated from %s by tools/embed-text.py. */\n" % src.rsplit("/", 1)[-1])
        f.write("const char %s[] =\n%s;\n" % (name, c_literal(text)))


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit("usage: embed-text.py INPUT OUTPUT NAME")
    main(*sys.argv[1:])
