"""The plumbing the oracles share: running tracedb, comparing rows, reporting.

Each oracle (btf_oracle.py, ovni_oracle.py, qs_oracle.py, prv_oracle.py, shark_oracle.py,
hw_oracle.py) keeps its format and metric logic to itself; this module holds only what
they all did alike: ingest into a temporary archive and read tracedb's answers back as
CSV (`Archive`, `ingest_each`), normalise a value for comparison (`norm`), compare two
sets of rows keyed by some columns (`compare`, `compare_tables`), print a trace's summary
line and its first differences (`summary`, `refused`), and the command line (`options`,
`seeds`, `write_tables`, `run`). Standard library only, like the oracles.

An oracle imports it from its own directory whatever the working directory is:

    sys.dont_write_bytecode = True  # no __pycache__ in the source tree
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import common
"""

import csv
import io
import json
import numbers
import os
import re
import subprocess
import sys
import tempfile

INT = re.compile(r"-?\d+")
FLOAT = re.compile(r"-?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?")


def norm(value):
    """A value as compared: NULL (None or an empty field) is "", a boolean "true"/"false"
    (Python's True, CSV's true, str(True)), an integer its decimal digits exactly (2^63 - 1
    is no float), a non-integer number repr(float) (so 1.50, 1.5 and 15e-1 are one), an
    integral float the integer ("3.0" is "3"); any other text is itself."""
    if value is None or value == "":
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, numbers.Integral):
        return str(int(value))
    if isinstance(value, numbers.Real):  # float, Fraction
        number = float(value)
        return str(int(number)) if number.is_integer() else repr(number)
    text = str(value)
    if text in ("True", "False"):
        return text.lower()
    if INT.fullmatch(text):
        return str(int(text))
    if FLOAT.fullmatch(text):
        number = float(text)
        return str(int(number)) if number.is_integer() else repr(number)
    return text


def natural(key):
    """Sort key for a row key (a tuple of normalised values): integers by value, before
    text, so that differences are reported in time order."""
    return tuple((0, int(x), "") if INT.fullmatch(str(x)) else (1, 0, str(x)) for x in key)


def keyed(rows, key_cols, cols, order=None):
    """Rows by (normalised key columns..., n): rows sharing a key are numbered n = 0, 1...
    in the order of their compared columns `cols` (normalised), or with `order`, of those
    integer columns (an empty field counting as -1; `()` keeps the rows' own order)."""
    groups = {}
    for r in rows:
        groups.setdefault(tuple(norm(r[c]) for c in key_cols), []).append(r)
    out = {}
    for key, group in groups.items():
        if order is None:
            group.sort(key=lambda r: [norm(r[c]) for c in cols])
        else:
            group.sort(key=lambda r: tuple(int(norm(r[c]) or -1) for c in order))
        for n, r in enumerate(group):
            out[key + (n,)] = r
    return out


def compare(name, ours, theirs, key_cols, cols, report, order=None, doubles=()):
    """Compare the oracle's rows of table `name` with tracedb's, matched by `keyed`: append
    a line to `report` per row missing on one side and per differing column, and return
    the counts {column or "missing in oracle"/"missing in tracedb": n}. Columns named in
    `doubles` are DOUBLE columns: equal when their numbers are (2^63 - 1 is stored as 2^63)."""
    a, b = keyed(ours, key_cols, cols, order), keyed(theirs, key_cols, cols, order)
    found = {}
    for key in sorted(set(a) | set(b), key=natural):
        if key not in a or key not in b:
            field = "missing in oracle" if key not in a else "missing in tracedb"
            found[field] = found.get(field, 0) + 1
            row = b[key] if key not in a else a[key]
            report.append("%s %s: %s (%s)" % (name, key, field, ", ".join(
                "%s=%s" % (c, norm(row.get(c)) or "NULL") for c in cols)))
            continue
        for c in cols:
            x, y = norm(a[key][c]), norm(b[key][c])
            if x != y and not (c in doubles and same_number(x, y)):
                found[c] = found.get(c, 0) + 1
                report.append("%s %s: %s oracle=%s tracedb=%s" % (
                    name, key, c, x or "NULL", y or "NULL"))
    return found


def same_number(x, y):
    """Whether two normalised values are one number as a double."""
    try:
        return float(x) == float(y)
    except ValueError:
        return False


def compare_tables(ours, theirs, tables, report, uncounted=(), **options):
    """`compare` each (name, key columns, compared columns) of `tables`: return the counts
    {name: {column: n}} and the summary's row counts ("N name", the oracle's rows; none for
    the names in `uncounted`). `options` go to `compare`."""
    found, counts = {}, []
    for name, key_cols, cols in tables:
        found[name] = compare(name, ours[name], theirs[name], key_cols, cols, report,
                              **options)
        if name not in uncounted:
            counts.append("%d %s" % (len(ours[name]), name))
    return found, counts


def differences(found):
    """The number of differences in counts {name: n} or {name: {column: n}}."""
    return sum(v if isinstance(v, int) else differences(v) for v in found.values())


def summary(label, counts, found, report, extra=""):
    """Print a trace's line `LABEL: N rows, ...; D differences {where}` and the first
    ORACLE_SHOW (20) lines of its report; return D."""
    n = differences(found)
    where = {k: v for k, v in found.items() if v}
    print("%s: %s; %d differences%s%s" % (label, ", ".join(counts), n,
                                          " %s" % where if where else "", extra))
    for line in report[:int(os.environ.get("ORACLE_SHOW", "20"))]:
        print("  " + line)
    return n


def refused(label, err):
    """Print that tracedb refused a trace (one difference); return 1."""
    print("%s: tracedb refused it: %s; 1 differences" % (label, err))
    return 1


class Archive:
    """A temporary tracedb archive, removed on leaving the `with` block:

        with Archive(tracedb) as db:
            err = db.ingest(["--format", "qs", trace])   # None, or tracedb's message
            rows = db.rows("SELECT ...")                 # [{column: CSV text}]
    """

    def __init__(self, tracedb):
        self.tracedb = tracedb
        self.tmp = None
        self.path = None

    def __enter__(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.path = os.path.join(self.tmp.name, "a.tdb")
        return self

    def __exit__(self, *exc):
        self.tmp.cleanup()

    def ingest(self, args):
        """`tracedb ingest --archive A ARGS...`: None, or its error output when it fails."""
        done = subprocess.run([self.tracedb, "ingest", "--archive", self.path] + args,
                              capture_output=True, text=True)
        return None if done.returncode == 0 else done.stderr.strip()

    def rows(self, query):
        """The rows of a SQL text (`tracedb sql -c`), or of a command line such as
        ["query", "cpu_load", "--param", "window=7ms"], as dicts of CSV text."""
        args = ["sql", "-c", query] if isinstance(query, str) else list(query)
        text = subprocess.run([self.tracedb] + args + ["--archive", self.path, "--format",
                                                       "csv"],
                              check=True, capture_output=True, text=True).stdout
        return list(csv.DictReader(io.StringIO(text)))

    def owners(self, traces):
        """{capture_id: trace} for the traces ingested: the trace that is the capture's first
        source file, else the innermost trace directory holding it (an ovni trace, an ovni
        output directory of .prv files)."""
        real = {os.path.realpath(t): t for t in traces}
        out = {}
        for r in self.rows("SELECT capture_id, source_files FROM captures"):
            first = os.path.realpath(json.loads(r["source_files"])[0])
            if first in real:
                out[r["capture_id"]] = real[first]
                continue
            inside = [p for p in real if first.startswith(p + os.sep)]
            if inside:
                out[r["capture_id"]] = real[max(inside, key=len)]
        return out

    def tables(self, traces, queries):
        """Each query's rows (`rows`), given to the trace their capture came from:
        {trace: {name: [row]}} for queries {name: query}."""
        owner = self.owners(traces)
        out = {t: {name: [] for name in queries} for t in traces}
        for name, query in queries.items():
            for r in self.rows(query):
                out[owner[r["capture_id"]]][name].append(r)
        return out


def ingest_each(tracedb, items, queries):
    """Ingest each (trace, `tracedb ingest` arguments naming it) into one temporary archive
    and run the queries: {trace: ({name: [row]}, None)}, or (None, tracedb's message) for a
    trace it refused."""
    with Archive(tracedb) as db:
        errors = {trace: db.ingest(args) for trace, args in items}
        good = [t for t, err in errors.items() if err is None]
        tables = db.tables(good, queries) if good else {}
    return {t: (tables.get(t), err) for t, err in errors.items()}


def options(argv, names):
    """Split argv into {option: value} for the options in `names` that take a value (None
    when not given) and the other arguments, in order."""
    opts = dict.fromkeys(names)
    files = []
    i = 0
    while i < len(argv):
        if argv[i] in opts and i + 1 < len(argv):
            opts[argv[i]] = argv[i + 1]
            i += 2
        else:
            files.append(argv[i])
            i += 1
    return opts, files


def seeds(text, default="1-10"):
    """The seeds of `--seeds A-B` (or one seed A), both ends included."""
    a, _, b = (text or default).partition("-")
    return range(int(a), int(b or a) + 1)


def write_tables(tables, out=None):
    """Print tables as CSV: per (name, columns, rows) a `# name` line, the header and the
    rows' normalised values."""
    w = csv.writer(out or sys.stdout)
    for name, cols, rows in tables:
        w.writerow(["# " + name])
        w.writerow(cols)
        for r in rows:
            w.writerow([norm(r.get(c)) for c in cols])


def run(main):
    """Exit with main(argv)'s status; quietly when the reader of its output went away
    (`| head`)."""
    try:
        sys.exit(main(sys.argv[1:]))
    except BrokenPipeError:
        sys.exit(0)
