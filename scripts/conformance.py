#!/usr/bin/env python3
"""The Lance Namespace's REST spec against running servers, for the operations bench uses.

For each server (NAME=URL), one scenario of requests under a namespace of its own
(PARENT$conf_<hex>, PARENT made first where it is missing): each of bench's twelve
catalog operations on an entry that exists and on one that does not, as bench's workers
send them. Every response is held by schemathesis (its checks not_a_server_error,
status_code_conformance, content_type_conformance, response_schema_conformance) to the spec
kept in spec/lance-namespace/spec.yaml, and its status to what the spec's operation pages
say the case answers. Prints one Markdown table: a row per case, a column per server.

    python3 scripts/conformance.py [--parent P] [--coverage] NAME=URL [NAME=URL ...]

With --coverage, also schemathesis's own coverage phase (`st run --phases coverage`, seed 1)
on those operations of each server: what failed (the number of cases it generated goes to
stderr).

Needs schemathesis 4.32.5 (pip install schemathesis==4.32.5; scripts/test.sh installs it).
Exit 0 when every server answered (what it answered is the table, conforming or not); 1 when
a server could not be reached or the parent not made.
"""

import argparse
import base64
import json
import os
import subprocess
import sys
import tempfile
import time

import schemathesis
import schemathesis.checks

HERE = os.path.dirname(os.path.abspath(__file__))
SPEC = os.path.join(HERE, "..", "spec", "lance-namespace", "spec.yaml")
CHECKS = [
    "not_a_server_error",
    "status_code_conformance",
    "content_type_conformance",
    "response_schema_conformance",
]
# The table bench's write-create-table sends: three rows (id int32, name utf8) as an Arrow
# IPC stream.
TABLE_IPC = base64.b64decode(
    "/////6gAAAAQAAAAAAAKAAwABgAFAAgACgAAAAABBAAMAAAACAAIAAAABAAIAAAABAAAAAIAAABEAAAABAAAANT/"
    "//8AAAAFEAAAABwAAAAEAAAAAAAAAAQAAABuYW1lAAAAAAQABAAEAAAAEAAUAAgAAAAHAAwAAAAQABAAAAAAAAAC"
    "EAAAABwAAAAEAAAAAAAAAAIAAABpZAAACAAMAAgABwAIAAAAAAAAASAAAAD/////yAAAABQAAAAAAAAADAAWAAYA"
    "BQAIAAwADAAAAAADBAAYAAAAKAAAAAAAAAAAAAoAGAAMAAQACAAKAAAAbAAAABAAAAADAAAAAAAAAAAAAAAFAAAA"
    "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAADAAAAAAAAAAQAAAAAAAAAAAAAAAAAAAAEAAAAAAAAAAQAAAAAAAAACAA"
    "AAAAAAAAAwAAAAAAAAAAAAAAAgAAAAMAAAAAAAAAAAAAAAAAAAADAAAAAAAAAAAAAAAAAAAAAQAAAAIAAAADAAAA"
    "AAAAAAAAAAABAAAAAgAAAAMAAABhYmMAAAAAAP////8AAAAA"
)

# (operation, case, method, path, entry, spec's answer): `entry` under the scenario's
# namespace (`{ns}`), its tables `{ns}$t…`; `missing` names one that does not exist. The
# answer is the status the spec's operation documents for the case (its 404 for a resource
# not found, 409 for a conflict) and, for an error, the error code of the spec's
# errors.md (1 NamespaceNotFound, 2 NamespaceAlreadyExists, 3 NamespaceNotEmpty,
# 4 TableNotFound, 5 TableAlreadyExists).
SCENARIO = [
    ("CreateNamespace", "new", "POST", "/v1/namespace/{id}/create", "{ns}$sub", "200"),
    ("CreateNamespace", "exists", "POST", "/v1/namespace/{id}/create", "{ns}$sub", "409 · 2"),
    ("ListNamespaces", "exists", "GET", "/v1/namespace/{id}/list", "{ns}", "200"),
    ("ListNamespaces", "missing", "GET", "/v1/namespace/{id}/list", "{ns}$missing", "404 · 1"),
    ("DescribeNamespace", "exists", "POST", "/v1/namespace/{id}/describe", "{ns}", "200"),
    ("DescribeNamespace", "missing", "POST", "/v1/namespace/{id}/describe", "{ns}$missing", "404 · 1"),
    ("NamespaceExists", "exists", "POST", "/v1/namespace/{id}/exists", "{ns}", "200"),
    ("NamespaceExists", "missing", "POST", "/v1/namespace/{id}/exists", "{ns}$missing", "404 · 1"),
    ("DeclareTable", "new", "POST", "/v1/table/{id}/declare", "{ns}$t1", "200"),
    ("DeclareTable", "exists", "POST", "/v1/table/{id}/declare", "{ns}$t1", "409 · 5"),
    ("DeclareTable", "no namespace", "POST", "/v1/table/{id}/declare", "{ns}$missing$t", "404 · 1"),
    # Not a case: removes what the case before may have made (not in the table).
    ("DropTable", "cleanup", "POST", "/v1/table/{id}/drop", "{ns}$missing$t", ""),
    ("CreateTable", "new", "POST", "/v1/table/{id}/create", "{ns}$t2", "200"),
    ("DescribeTable", "exists", "POST", "/v1/table/{id}/describe", "{ns}$t1", "200"),
    ("DescribeTable", "missing", "POST", "/v1/table/{id}/describe", "{ns}$missing", "404 · 4"),
    ("TableExists", "exists", "POST", "/v1/table/{id}/exists", "{ns}$t1", "200"),
    ("TableExists", "missing", "POST", "/v1/table/{id}/exists", "{ns}$missing", "404 · 4"),
    ("ListTables", "exists", "GET", "/v1/namespace/{id}/table/list", "{ns}", "200"),
    ("ListTables", "missing", "GET", "/v1/namespace/{id}/table/list", "{ns}$missing", "404 · 1"),
    ("DropNamespace", "not empty", "POST", "/v1/namespace/{id}/drop", "{ns}", "409 · 3"),
    ("DeregisterTable", "exists", "POST", "/v1/table/{id}/deregister", "{ns}$t1", "200"),
    ("DeclareTable", "again", "POST", "/v1/table/{id}/declare", "{ns}$t3", "200"),
    ("DropTable", "exists", "POST", "/v1/table/{id}/drop", "{ns}$t3", "200"),
    ("DropTable", "missing", "POST", "/v1/table/{id}/drop", "{ns}$missing", "404 · 4"),
    ("DropNamespace", "exists", "POST", "/v1/namespace/{id}/drop", "{ns}$sub", "200"),
    ("DropNamespace", "missing", "POST", "/v1/namespace/{id}/drop", "{ns}$missing", "404 · 1"),
]


@schemathesis.serializer("application/vnd.apache.arrow.stream")
def arrow_stream(ctx, value):
    """CreateTable's body as it is: Arrow IPC bytes."""
    return value


def case_of(schema, method, path, entry):
    op = schema[path][method]
    if path.endswith("/table/{id}/create"):
        return op.Case(
            path_parameters={"id": entry},
            body=TABLE_IPC,
            media_type="application/vnd.apache.arrow.stream",
        )
    if method == "GET":
        return op.Case(path_parameters={"id": entry})
    return op.Case(path_parameters={"id": entry}, body={}, media_type="application/json")


def answer(schema, checks, url, method, path, entry):
    """The status and what schemathesis's checks found of one request ('' where it
    conforms)."""
    case = case_of(schema, method, path, entry)
    response = case.call(base_url=url, timeout=30)
    try:
        code = response.json().get("code") if response.status_code >= 300 else None
    except ValueError:
        code = None
    try:
        case.validate_response(response, checks=checks)
        found = ""
    except BaseExceptionGroup as e:  # a FailureGroup: every check that failed
        titles = sorted({getattr(f, "title", type(f).__name__) for f in getattr(e, "exceptions", [e])})
        found = "; ".join(titles)
    said = str(response.status_code) + ("" if code is None else f" · {code}")
    return said, found


def run(schema, checks, url, parent):
    ns = f"{parent}$conf_{int(time.time() * 1e6):x}"
    status, _ = answer(schema, checks, url, "POST", "/v1/namespace/{id}/exists", parent)
    if status != "200":
        status, _ = answer(schema, checks, url, "POST", "/v1/namespace/{id}/create", parent)
        if status != "200":
            raise SystemExit(f"{url}: cannot make the parent {parent} (status {status})")
    status, found = answer(schema, checks, url, "POST", "/v1/namespace/{id}/create", ns)
    if status != "200":
        raise SystemExit(f"{url}: cannot make the scenario's namespace {ns} ({status} {found})")
    out = []
    for _, _, method, path, entry, _ in SCENARIO:
        out.append(answer(schema, checks, url, method, path, entry.format(ns=ns)))
    return out


OPERATIONS = sorted({op for op, *_ in SCENARIO})


def coverage(url):
    """schemathesis's own coverage phase (`st run --phases coverage`, seed 1) on the
    operations bench uses: the cases it generated, and each kind of failure with the
    operations that showed it."""
    st = os.path.join(os.path.dirname(sys.executable), "st")
    with tempfile.TemporaryDirectory() as d:
        report = os.path.join(d, "report.json")
        subprocess.run(
            [st, "run", SPEC, "--url", url, "--include-operation-id-regex",
             "^(" + "|".join(OPERATIONS) + ")$", "--phases", "coverage", "--seed", "1",
             "--workers", "1", "--checks", ",".join(CHECKS), "--max-time", "60",
             "--report", "json", "--report-json-path", report],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False, cwd=d)
        with open(report) as f:
            r = json.load(f)
    found = [f"{x['title']} ({', '.join(x['operations'])})" for x in r["failures"]]
    found += [f"{x['title']} ({x['count']})" for x in r["errors"]]
    return r["test_cases"]["generated"], found


def cell(status, found, spec):
    said = status if status == spec else f"**{status}**"
    return said if not found else f"{said}: {found}"


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--parent", default="conformance")
    p.add_argument("--coverage", action="store_true",
                   help="also run schemathesis's coverage phase on each server")
    p.add_argument("servers", nargs="+", metavar="NAME=URL")
    a = p.parse_args()
    schema = schemathesis.openapi.from_path(SPEC)
    checks = schemathesis.checks.CHECKS.get_by_names(CHECKS)
    servers = [s.split("=", 1) for s in a.servers]
    try:
        results = [run(schema, checks, url.rstrip("/"), a.parent) for _, url in servers]
    except OSError as e:
        print(f"a server could not be reached: {e}", file=sys.stderr)
        return 1
    print("| operation | case | spec | " + " | ".join(n for n, _ in servers) + " |")
    print("|---|---|---|" + "---|" * len(servers))
    for k, (op, case, _, _, _, spec) in enumerate(SCENARIO):
        if not spec:
            continue
        cells = [cell(*r[k], spec) for r in results]
        print(f"| {op} | {case} | {spec} | " + " | ".join(cells) + " |")
    if a.coverage:
        print()
        for name, url in servers:
            n, found = coverage(url.rstrip("/"))
            print(f"- {name}: schemathesis's coverage phase: "
                  + ("; ".join(found) if found else "no failure"))
            # The number of cases on stderr: a machine slow enough to reach the phase's
            # 60 s budget generates fewer, and the table does not move with the machine.
            print(f"{name}: schemathesis's coverage phase generated {n} cases",
                  file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
