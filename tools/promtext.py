# SPDX-License-Identifier: LGPL-2.1-or-later
"""A strict parser of Prometheus' text exposition format, version 0.0.4.

Used by the tests that scrape a live openenvd's GET /metrics and by the fleet
driver (tools/fleet.py), so one reading of the format serves both:

    families = promtext.parse(text)           # raises promtext.Error
    families["openenvd_episodes_total"].value(verdict="graded", reason="done")

What is refused (each an Error naming the line): a body that is not UTF-8 or
does not end in a newline; a HELP or TYPE line that is malformed, repeated, or
(TYPE) after the family's first sample; an unknown type; metric and label names
outside [a-zA-Z_:][a-zA-Z0-9_:]* / [a-zA-Z_][a-zA-Z0-9_]* (a leading "__" is
reserved); a label repeated in one sample; a label value with an escape other
than \\\\, \\" and \\n; a value that is not a float (NaN, +Inf, -Inf included); a
timestamp that is not an integer; a sample name that is not its family's
(histogram: _bucket, _sum, _count; summary: the name, _sum, _count); a family
whose samples are not contiguous; the same series twice; a counter that is
negative or NaN; a histogram series without _sum, _count or a "+Inf" bucket,
with "le" bounds that do not ascend, cumulative counts that decrease, or a
_count unequal to its +Inf bucket.
"""
import math
import re

METRIC_NAME = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*")
LABEL_NAME = re.compile(r"[a-zA-Z_][a-zA-Z0-9_]*")
TYPES = ("counter", "gauge", "histogram", "summary", "untyped")
FLOAT = re.compile(r"[+-]?(?:\d+\.?\d*(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?)")


class Error(ValueError):
    pass


class Family:
    def __init__(self, name):
        self.name = name
        self.type = None
        self.help = None
        self.samples = []  # (sample name, {label: value}, float)

    def series(self, sample_name=None):
        """{frozenset(labels.items()): value} of one sample name (default: the family's)."""
        want = sample_name or self.name
        return {frozenset(l.items()): v for n, l, v in self.samples if n == want}

    def value(self, sample_name=None, **labels):
        """The value of the series with exactly these labels; KeyError if absent."""
        return self.series(sample_name)[frozenset(labels.items())]


def _unescape_help(s, where):
    out, i = [], 0
    while i < len(s):
        c = s[i]
        if c == "\\":
            if i + 1 >= len(s) or s[i + 1] not in "\\n":
                raise Error("%s: bad escape in HELP" % where)
            out.append("\\" if s[i + 1] == "\\" else "\n")
            i += 2
            continue
        out.append(c)
        i += 1
    return "".join(out)


def _parse_value(s, where):
    if s in ("NaN", "+Inf", "Inf", "-Inf"):
        return float(s.replace("Inf", "inf").replace("NaN", "nan"))
    if not FLOAT.fullmatch(s):
        raise Error("%s: %r is not a value" % (where, s))
    return float(s)


def _parse_labels(line, i, where):
    """Parses {a="x",...} starting at line[i] == '{'; returns (labels, index after '}')."""
    labels = {}
    i += 1
    while True:
        if i < len(line) and line[i] == "}":
            return labels, i + 1
        m = LABEL_NAME.match(line, i)
        if not m:
            raise Error("%s: bad label name at column %d" % (where, i + 1))
        name = m.group(0)
        if name.startswith("__"):
            raise Error("%s: label %s is reserved" % (where, name))
        if name in labels:
            raise Error("%s: label %s repeated" % (where, name))
        i = m.end()
        if line[i:i + 2] != '="':
            raise Error("%s: expected =\" after label %s" % (where, name))
        i += 2
        value = []
        while True:
            if i >= len(line):
                raise Error("%s: unterminated label value" % where)
            c = line[i]
            if c == '"':
                i += 1
                break
            if c == "\\":
                nxt = line[i + 1] if i + 1 < len(line) else ""
                if nxt not in ('\\', '"', "n"):
                    raise Error("%s: bad escape \\%s in label %s" % (where, nxt, name))
                value.append("\n" if nxt == "n" else nxt)
                i += 2
                continue
            value.append(c)
            i += 1
        labels[name] = "".join(value)
        if i < len(line) and line[i] == ",":
            i += 1
            continue
        if i < len(line) and line[i] == "}":
            return labels, i + 1
        raise Error("%s: expected , or } after label %s" % (where, name))


def _family_of(sample, families):
    """The family a sample name belongs to, by its declared type."""
    if sample in families and families[sample].type in (None, "counter", "gauge", "untyped",
                                                         "summary"):
        return families[sample]
    for suffix, types in (("_bucket", ("histogram",)), ("_sum", ("histogram", "summary")),
                          ("_count", ("histogram", "summary"))):
        if sample.endswith(suffix):
            base = families.get(sample[: -len(suffix)])
            if base and base.type in types:
                return base
    return None


def _check_histogram(f):
    groups = {}
    for name, labels, value in f.samples:
        key = frozenset((k, v) for k, v in labels.items() if k != "le")
        g = groups.setdefault(key, {"buckets": [], "sum": None, "count": None})
        if name == f.name + "_bucket":
            if "le" not in labels:
                raise Error("%s: a bucket without le" % f.name)
            g["buckets"].append((_parse_value(labels["le"], f.name), value))
        elif name == f.name + "_sum":
            g["sum"] = value
        elif name == f.name + "_count":
            g["count"] = value
        else:
            raise Error("%s: %s is not a histogram sample" % (f.name, name))
    for key, g in groups.items():
        what = "%s%s" % (f.name, dict(key))
        bounds = [b for b, _ in g["buckets"]]
        if not bounds or bounds[-1] != math.inf:
            raise Error("%s: no +Inf bucket last" % what)
        if any(b2 <= b1 for b1, b2 in zip(bounds, bounds[1:])):
            raise Error("%s: le bounds do not ascend" % what)
        counts = [c for _, c in g["buckets"]]
        if any(c2 < c1 for c1, c2 in zip(counts, counts[1:])):
            raise Error("%s: cumulative bucket counts decrease" % what)
        if g["sum"] is None or g["count"] is None:
            raise Error("%s: _sum or _count missing" % what)
        if g["count"] != counts[-1]:
            raise Error("%s: _count %s != +Inf bucket %s" % (what, g["count"], counts[-1]))


def parse(data):
    """Parses an exposition (bytes or str); returns {family name: Family}."""
    if isinstance(data, bytes):
        try:
            data = data.decode("utf-8")
        except UnicodeDecodeError as e:
            raise Error("not UTF-8: %s" % e)
    if data and not data.endswith("\n"):
        raise Error("the last line has no newline")
    families = {}
    seen_series = set()
    done = set()  # families whose samples are over
    current = None
    for n, line in enumerate(data.split("\n")[:-1], 1):
        where = "line %d" % n
        if line == "":
            continue
        if line.startswith("#"):
            parts = line.split(" ", 3)
            if len(parts) >= 2 and parts[1] in ("HELP", "TYPE"):
                if len(parts) < 3 or not METRIC_NAME.fullmatch(parts[2]):
                    raise Error("%s: malformed %s line" % (where, parts[1]))
                f = families.setdefault(parts[2], Family(parts[2]))
                if parts[1] == "HELP":
                    if f.help is not None:
                        raise Error("%s: second HELP for %s" % (where, f.name))
                    f.help = _unescape_help(parts[3] if len(parts) > 3 else "", where)
                else:
                    if f.type is not None:
                        raise Error("%s: second TYPE for %s" % (where, f.name))
                    if f.samples:
                        raise Error("%s: TYPE for %s after its samples" % (where, f.name))
                    if len(parts) != 4 or parts[3] not in TYPES:
                        raise Error("%s: unknown type in %r" % (where, line))
                    f.type = parts[3]
            continue  # any other comment
        m = METRIC_NAME.match(line)
        if not m:
            raise Error("%s: bad metric name" % where)
        sample = m.group(0)
        i = m.end()
        labels = {}
        if i < len(line) and line[i] == "{":
            labels, i = _parse_labels(line, i, where)
        rest = line[i:]
        if not rest.startswith((" ", "\t")):
            raise Error("%s: no space before the value" % where)
        fields = rest.split()
        if len(fields) not in (1, 2):
            raise Error("%s: expected a value and an optional timestamp" % where)
        value = _parse_value(fields[0], where)
        if len(fields) == 2 and not re.fullmatch(r"-?\d+", fields[1]):
            raise Error("%s: bad timestamp %r" % (where, fields[1]))
        f = _family_of(sample, families)
        if f is None:
            f = families.setdefault(sample, Family(sample))
            f.type = f.type or "untyped"
        if f is not current:
            if f.name in done:
                raise Error("%s: samples of %s are not contiguous" % (where, f.name))
            if current is not None:
                done.add(current.name)
            current = f
        key = (sample, frozenset(labels.items()))
        if key in seen_series:
            raise Error("%s: series %s%s twice" % (where, sample, labels))
        seen_series.add(key)
        if f.type == "counter" and (math.isnan(value) or value < 0):
            raise Error("%s: counter %s is %s" % (where, sample, fields[0]))
        f.samples.append((sample, labels, value))
    for f in families.values():
        if f.type == "histogram":
            _check_histogram(f)
    return families


def self_test():
    """Broken expositions the parser must refuse (run by the metrics test)."""
    good = ('# HELP h_seconds Help.\n# TYPE h_seconds histogram\n'
            'h_seconds_bucket{le="1"} 1\nh_seconds_bucket{le="+Inf"} 2\n'
            'h_seconds_sum 3.5\nh_seconds_count 2\n# TYPE c_total counter\nc_total{a="x\\"y"} 1\n')
    families = parse(good)
    assert families["c_total"].value(a='x"y') == 1
    assert families["h_seconds"].value("h_seconds_count") == 2
    bad = [
        good[:-1],                                                 # no final newline
        good.replace("histogram", "histogramm"),                   # unknown type
        good + "# TYPE c_total counter\n",                         # second TYPE
        good + "c_total{a=\"z\"} -1\n",                            # negative counter
        good.replace('le="1"} 1', 'le="1"} 3'),                    # decreasing buckets
        good.replace("h_seconds_count 2", "h_seconds_count 5"),    # count != +Inf
        good.replace('h_seconds_bucket{le="+Inf"} 2\n', ""),       # no +Inf bucket
        good + 'c_total{a="x\\"y"} 2\n',                           # same series twice
        good + "h_seconds_sum{b=\"1\"} 1\n",                       # not contiguous
        good + 'c_total{a="\\t"} 1\n',                             # bad escape
        good + 'c_total{a="1",a="2"} 1\n',                         # repeated label
        good + "c_total{__a=\"1\"} 1\n",                           # reserved label
        good + "c_total{a=\"1\"} one\n",                           # not a value
        good + "1bad 1\n",                                         # bad name
        good + "c_total{a=\"2\"}1\n",                              # no space
    ]
    for b in bad:
        try:
            parse(b)
        except Error:
            continue
        raise AssertionError("accepted: %r" % b)
    try:
        parse(b"# HELP x \xff\n")
    except Error:
        return
    raise AssertionError("accepted invalid UTF-8")
