#!/usr/bin/env python3
"""A real S3-compatible server on 127.0.0.1 for bench's S3 tests: moto's server mode, with
what a network store does to requests when asked; or (--upstream) the same counts, latency
and faults in front of another S3 server, such as Ceph's gateway (scripts/rgw-up.sh).

    python3 scripts/s3-server.py --port 9000 --bucket bench [--bucket other]
        [--ignore-conditional-put] [--auth]
        [--latency-ms 25] [--jitter-ms 5] [--throttle-rate 0.01] [--reset-rate 0.01]
        [--seed 1]
    python3 scripts/s3-server.py --port 9000 --upstream http://127.0.0.1:8000 [--bucket bench]
        [--latency-ms 25] ...

With --upstream every request is passed on unchanged (its signature holds: the Host header
the client signed is kept) and the answer passed back; the buckets are created at the
upstream with the credentials in AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY (an existing one
is kept). moto is not needed then, and --ignore-conditional-put and --auth are moto's only.

moto's put_object checks "exists" and then writes without a lock, so two racing
If-None-Match writers can both win; every PUT is serialised here so that Lance's commit
safety holds. Nothing is persisted: the buckets are created on start. With
--ignore-conditional-put the server drops If-None-Match (a store that does not honour
conditional PUT, for the preflight test). With --auth it checks credentials: it creates an
IAM user allowed s3:* and prints its key pair after "ready"; any other key is refused.

A network store, on demand (each a fraction of requests, or milliseconds):
  --latency-ms MS     every request waits MS before it is served (the round trip)
  --jitter-ms MS      plus a uniformly random 0..MS
  --throttle-rate F   a fraction F of requests is refused with 503 SlowDown, as S3 does
  --reset-rate F      a fraction F of connections is reset (TCP RST) instead of answered
  --deny-delete TEXT  deletes of keys that contain TEXT are refused (403 AccessDenied), as
                      a bucket policy or a delete throttled past the retries would
  --lose-reply-rate F a fraction F of the requests of --lose-reply-of is applied at the store,
                      then its connection reset before the reply is sent: a reply lost after
                      its effect (the client sees a broken connection for a write that landed)
  --lose-reply-every N  every N-th of those requests instead (the N-th, the 2N-th, ...)
  --lose-reply-of KIND  the requests that lose their reply: conditional_put (the default: the
                      commits of a manifest), put, delete, copy (a server-side copy, as lance
                      publishes a table version with), or any
  --lose-reply-under TEXT  only requests whose key contains TEXT (e.g. /runs/: a sweep's
                      cells, not its goldens) are counted and lose their reply
  --slow-down-after-lost-reply N  after each reply lost so, the next N reads (HEAD, GET) of
                      its key are answered 503 SlowDown: the client's look-up of whether its
                      write landed meets a burst, as S3's throttling of a hot key gives one
  --fail-after-apply-every N  every N-th request of --lose-reply-of (under --lose-reply-under)
                      is applied at the store, then answered 500 InternalError; every resend
                      of it (the same method and key) is answered 500 too, unapplied: an
                      error that says nothing of the effect (the client resends on a 5xx)
  --head-no-length TEXT  a HEAD of a key that contains TEXT is answered without the object's
                      length (Content-Length: 0), as a proxy or gateway that drops it does
  --seed N            the faults' random sequence (default: random)

One fault at one request, on demand (a campaign's point, armed by the worker that meets it):
POST /_bench/arm with {"under": PREFIX, "fault": "KIND@K", "pid": PID} gives the fault KIND
to the K-th request whose key starts with PREFIX (/bucket/key-prefix/; a listing's prefix, a
batch delete's first key), counted from then on
("trace": none, the requests only listed); GET /_bench/arm?under=PREFIX answers the fault,
the position it met (fired_at, null if none) and every request under PREFIX since, in order;
DELETE /_bench/arm?under=PREFIX removes it (404 where nothing is armed). POST /_bench/window
with {"under": PREFIX, "fault": F, "of": KIND, "on": true} gives F (slow-down, lose-reply,
reset or fail-after-apply, as below) to every request of KIND (any, or a kind as counted)
under PREFIX until the same with "on": false, which answers how many it met (a nemesis'
window; windows of other faults or kinds under the same prefix are on at once, the first
switched on met first). The kinds:
  lose-reply        applied, then the connection reset before the reply
  reset             the connection reset before it is applied
  slow-down         503 SlowDown to it and to its next 2 resends (same method and key)
  slow-down-window  503 SlowDown to it and to the next 19 requests under PREFIX
  lose-reply-then-slow-down  applied, the connection reset before the reply, then 503
                    SlowDown to the next 16 reads (HEAD, GET) of its key: one request's every
                    send (the client's look-up of whether its write landed), then served
  fail-after-apply  applied, then 500 InternalError; its next 15 resends 500, unapplied
                    (past the client's budget: 16 sends), then served
  delay             applied, its reply held --delay-secs (35 s: past object_store's default
                    timeout, 30 s; a client given a shorter `timeout` meets it sooner)
  head-no-length    a HEAD answered with Content-Length: 0 (a request that is no HEAD: none)
  kill-before       PID sent SIGKILL when it arrives, the request not applied
  kill-after        the request applied, then PID sent SIGKILL, the reply never sent
  pause             PID sent SIGSTOP when it arrives and the request held, unapplied, until
                    POST /_bench/resume with {"under": PREFIX} (or 120 s): then PID sent
                    SIGCONT and the request served; GET /_bench/arm tells "paused" meanwhile
  hold              the same without signals: the request alone held until resumed (a
                    client whose one request stalls while its other threads go on)

Counts: every request served is counted by kind, as bench counts them: get (incl. ranged),
put (incl. conditional, and a multipart upload's start, parts and completion),
conditional_put, list, head, delete (incl. a batch delete), copy; with the bytes of object
bodies written by PUTs (written_bytes) and read by GETs (read_bytes); and how many requests
were throttled, reset or denied instead, how many
were applied and lost their reply (lost_reply; counted as served too), how many were
applied and answered 500 (failed_after_apply; served too) and how many resends of those were
answered 500 unapplied (internal_error), and how many were
answered 412 Precondition Failed (precondition_failed), how many HEADs were answered
without their length (no_length); and the kinds
again per access key the requests were signed with (by_access_key). GET
/_bench/counts answers them as JSON; DELETE /_bench/counts answers them and sets them to 0.
These requests are not counted.

Prints "ready" once it serves requests.
Needs: pip install 'moto[server]==5.1.22' (with --upstream: boto3 and werkzeug, which it brings)
"""
import argparse
import http.client
import io
import json
import os
import random
import signal
import socket
import struct
import threading
import time
import urllib.parse

import boto3
from werkzeug.serving import make_server

parser = argparse.ArgumentParser(
    description="An S3-compatible test server (moto) on 127.0.0.1 for bench: PUTs serialised, "
    "If-None-Match honoured, requests counted by kind (GET /_bench/counts; DELETE resets), "
    "and optionally a network's latency and faults. Prints 'ready' when it serves.")
parser.add_argument("--port", type=int, default=9000, help="port on 127.0.0.1 (default 9000)")
parser.add_argument("--bucket", action="append", default=[],
                    help="a bucket to create at start (repeatable)")
parser.add_argument("--ignore-conditional-put", action="store_true",
                    help="accept PUT with If-None-Match over an existing object (a store "
                    "without conditional PUT, which bench's preflight must refuse)")
parser.add_argument("--auth", action="store_true",
                    help="check credentials: create an IAM user allowed s3:* and print its "
                    "key pair after 'ready'; any other key is refused (by default any key "
                    "is accepted)")
parser.add_argument("--latency-ms", type=float, default=0.0,
                    help="every request waits this long before it is served (the round trip)")
parser.add_argument("--jitter-ms", type=float, default=0.0,
                    help="plus a uniformly random 0 to this many ms")
parser.add_argument("--throttle-rate", type=float, default=0.0,
                    help="fraction of requests refused with 503 SlowDown, as S3 does")
parser.add_argument("--reset-rate", type=float, default=0.0,
                    help="fraction of connections reset (TCP RST) instead of answered")
parser.add_argument("--deny-delete", metavar="TEXT", default=None,
                    help="refuse (403 AccessDenied) every delete of a key that contains TEXT, "
                    "single or batch, as a bucket policy would")
parser.add_argument("--lose-reply-rate", type=float, default=0.0,
                    help="fraction of the requests of --lose-reply-of applied at the store, "
                    "then reset before the reply: a reply lost after its effect")
parser.add_argument("--lose-reply-every", type=int, default=0, metavar="N",
                    help="every N-th request of --lose-reply-of loses its reply instead")
parser.add_argument("--lose-reply-of", default="conditional_put",
                    choices=["conditional_put", "put", "delete", "copy", "any"],
                    help="which requests lose their reply (default: conditional_put, the "
                    "commits of a manifest)")
parser.add_argument("--lose-reply-under", metavar="TEXT", default=None,
                    help="only requests whose key contains TEXT lose their reply (and count "
                    "towards --lose-reply-every)")
parser.add_argument("--slow-down-after-lost-reply", type=int, default=0, metavar="N",
                    help="after a reply lost by --lose-reply-every/--lose-reply-rate, answer "
                    "the next N reads (HEAD, GET) of that key 503 SlowDown: the client's "
                    "look-up of whether its write landed meets a burst (16: one request's "
                    "every send, object_store's 3 retries each resent 3 times by lance)")
parser.add_argument("--fail-after-apply-every", type=int, default=0, metavar="N",
                    help="every N-th request of --lose-reply-of (under --lose-reply-under) is "
                    "applied, then answered 500; its resends (same method and key) are "
                    "answered 500 unapplied")
parser.add_argument("--head-no-length", metavar="TEXT", default=None,
                    help="a HEAD of a key that contains TEXT is answered with Content-Length: 0 "
                    "(the object's length dropped)")
parser.add_argument("--delay-secs", type=float, default=35.0,
                    help="how long the `delay` fault holds a reply (default 35: past "
                    "object_store's default timeout, 30 s)")
parser.add_argument("--seed", type=int, default=None,
                    help="seed of the faults' random sequence (default: random)")
parser.add_argument("--upstream", metavar="URL", default=None,
                    help="pass every request on to this S3 server (e.g. Ceph's gateway) "
                    "instead of moto, with the same counts, latency and faults")
args = parser.parse_args()
if args.upstream and (args.ignore_conditional_put or args.auth):
    parser.error("--ignore-conditional-put and --auth change moto; with --upstream the "
                 "upstream server decides")
if args.lose_reply_every < 0 or args.fail_after_apply_every < 0:
    parser.error("--lose-reply-every and --fail-after-apply-every are counts of requests "
                 "(1 or more), or 0 for none")
for name in ("throttle_rate", "reset_rate", "lose_reply_rate"):
    if not 0.0 <= getattr(args, name) <= 1.0:
        parser.error(f"--{name.replace('_', '-')} is a fraction of requests, from 0 to 1")

def moto_app():
    """moto's S3, with every PUT serialised (and If-None-Match dropped when asked)."""
    from moto.moto_server.werkzeug_app import DomainDispatcherApplication, create_backend_app
    from moto.s3.responses import S3Response

    lock = threading.Lock()
    original = S3Response.put_object

    def put_object(self):
        if args.ignore_conditional_put:
            self.headers = {
                k: v for k, v in self.headers.items() if k.lower() != "if-none-match"
            }
        with lock:
            return original(self)

    S3Response.put_object = put_object
    return DomainDispatcherApplication(create_backend_app)


# Headers of one connection, not of the request: not passed on.
HOP_BY_HOP = {"connection", "keep-alive", "transfer-encoding", "te", "trailer", "upgrade",
              "proxy-connection", "expect"}


class Upstream:
    """WSGI app that passes each request on to another S3 server, unchanged: method, raw
    path and query, every header (Host included, which the signature covers) and body."""

    def __init__(self, url):
        u = urllib.parse.urlsplit(url)
        if u.scheme != "http" or not u.hostname:
            raise SystemExit(f"--upstream {url}: give http://HOST:PORT")
        self.host, self.port = u.hostname, u.port or 80
        # Idle connections to the upstream, kept open between requests.
        self.idle = []
        self.idle_lock = threading.Lock()

    def __call__(self, environ, start_response):
        method = environ["REQUEST_METHOD"]
        target = environ.get("RAW_URI") or environ.get("REQUEST_URI")
        if not target:
            target = urllib.parse.quote(environ.get("PATH_INFO", "/"))
            if environ.get("QUERY_STRING"):
                target += "?" + environ["QUERY_STRING"]
        headers = [(k[5:].replace("_", "-").lower(), v) for k, v in environ.items()
                   if k.startswith("HTTP_")]
        for k in ("CONTENT_TYPE", "CONTENT_LENGTH"):
            if environ.get(k):
                headers.append((k.replace("_", "-").lower(), environ[k]))
        length = environ.get("CONTENT_LENGTH")
        body = environ["wsgi.input"].read(int(length)) if length else b""
        if not length and "chunked" in environ.get("HTTP_TRANSFER_ENCODING", ""):
            body = environ["wsgi.input"].read()
            headers.append(("content-length", str(len(body))))
        for attempt in (1, 2):
            with self.idle_lock:
                conn = self.idle.pop() if self.idle else None
            fresh = conn is None
            conn = conn or http.client.HTTPConnection(self.host, self.port, timeout=120)
            try:
                conn.putrequest(method, target, skip_host=True, skip_accept_encoding=True)
                for k, v in headers:
                    if k not in HOP_BY_HOP:
                        conn.putheader(k, v)
                conn.endheaders(body)
                resp = conn.getresponse()
                payload = resp.read()
            except (http.client.HTTPException, OSError):
                conn.close()
                # An idle connection the upstream closed meanwhile: once more on a new one.
                if fresh or attempt == 2:
                    raise
                continue
            if resp.will_close:
                conn.close()
            else:
                with self.idle_lock:
                    self.idle.append(conn)
            break
        out = [(k, v) for k, v in resp.getheaders() if k.lower() not in HOP_BY_HOP]
        if method != "HEAD":
            # The body is whole here: its length, whatever the upstream framed it as.
            out = [(k, v) for k, v in out if k.lower() != "content-length"]
            out.append(("Content-Length", str(len(payload))))
        start_response(f"{resp.status} {resp.reason}", out)
        return [payload] if method != "HEAD" else []

KINDS = ("get", "put", "conditional_put", "list", "head", "delete", "copy")


def zero():
    counts = {k: 0 for k in KINDS}
    counts.update(read_bytes=0, written_bytes=0, throttled=0, reset=0, denied=0,
                  lost_reply=0, failed_after_apply=0, internal_error=0,
                  precondition_failed=0, no_length=0, paused=0, by_access_key={})
    return counts


_counts = zero()
_counts_lock = threading.Lock()
_rng = random.Random(args.seed)


def count(key=None, **delta):
    with _counts_lock:
        for k, v in delta.items():
            _counts[k] += v
            if key is not None and k in KINDS:
                per_key = _counts.setdefault("by_access_key", {}).setdefault(key, {})
                per_key[k] = per_key.get(k, 0) + v


def access_key(environ):
    """The access key id a request is signed with (SigV4), if any."""
    auth = environ.get("HTTP_AUTHORIZATION", "")
    if "Credential=" not in auth:
        return None
    return auth.split("Credential=", 1)[1].split("/", 1)[0]


def kinds_of(environ):
    """The kinds a request counts as (a conditional PUT is a put and a conditional_put)."""
    method = environ["REQUEST_METHOD"]
    path = environ.get("PATH_INFO", "/")
    query = environ.get("QUERY_STRING", "")
    # Path-style addressing: /bucket or /bucket/key.
    has_key = len([p for p in path.split("/") if p]) > 1
    if method == "HEAD":
        return ["head"]
    if method == "GET":
        return ["get"] if has_key else ["list"]
    if method == "DELETE":
        return ["delete"]
    if method == "POST":
        # A batch delete, or the start or end of a multipart upload (part of a PUT).
        return ["delete"] if "delete" in query.split("&") else ["put"]
    if method == "PUT":
        if environ.get("HTTP_X_AMZ_COPY_SOURCE"):
            return ["copy"]
        if environ.get("HTTP_IF_NONE_MATCH") or environ.get("HTTP_IF_MATCH"):
            return ["put", "conditional_put"]
        return ["put"]
    return []


SLOW_DOWN = (
    b'<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>SlowDown</Code>'
    b"<Message>Please reduce your request rate.</Message>"
    b"<RequestId>bench-s3-server</RequestId></Error>"
)


ACCESS_DENIED = (
    b'<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>AccessDenied</Code>'
    b"<Message>Access Denied</Message><RequestId>bench-s3-server</RequestId></Error>"
)


_lose_seen = 0


def loses_reply(kinds, path):
    """Whether this request (of `kinds`, to `path`) is applied and then loses its reply."""
    global _lose_seen
    if args.lose_reply_of != "any" and args.lose_reply_of not in kinds:
        return False
    if args.lose_reply_under is not None and args.lose_reply_under not in path:
        return False
    if not (args.lose_reply_every or args.lose_reply_rate):
        return False
    with _counts_lock:
        _lose_seen += 1
        if args.lose_reply_every:
            return _lose_seen % args.lose_reply_every == 0
        return _rng.random() < args.lose_reply_rate


# Keys whose reply was lost, and how many of their reads are still answered 503
# (--slow-down-after-lost-reply).
_slow_after = {}


def slowed_after_lost_reply(method, path):
    """Whether this read meets the burst that follows its key's lost reply."""
    if method not in ("HEAD", "GET"):
        return False
    with _counts_lock:
        due = _slow_after.get(path, 0)
        if due > 0:
            _slow_after[path] = due - 1
        return due > 0


_fail_seen = 0
# (method, key) of each request applied and answered 500: its resends are answered 500 too.
_failing = set()

INTERNAL_ERROR = (
    b'<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>InternalError</Code>'
    b"<Message>We encountered an internal error. Please try again.</Message>"
    b"<RequestId>bench-s3-server</RequestId></Error>"
)


def fails_after_apply(kinds, path):
    """Whether this request is applied and then answered 500 (--fail-after-apply-every)."""
    global _fail_seen
    if not args.fail_after_apply_every:
        return False
    if args.lose_reply_of != "any" and args.lose_reply_of not in kinds:
        return False
    if args.lose_reply_under is not None and args.lose_reply_under not in path:
        return False
    with _counts_lock:
        _fail_seen += 1
        return _fail_seen % args.fail_after_apply_every == 0


# Faults armed on demand (POST /_bench/arm), by prefix: each meets one request.
ARMED_KINDS = ("trace", "lose-reply", "reset", "slow-down", "slow-down-window",
               "lose-reply-then-slow-down", "fail-after-apply", "delay", "head-no-length",
               "kill-before", "kill-after", "pause", "hold")
SLOW_DOWN_ANSWERS = 3
WINDOW_REQUESTS = 20
# The client's resends of one request: object_store's 3 retries, each round resent 3 times
# more by lance's throttling layer (16 sends in all).
RESENDS = 15
DELAY_SECS = args.delay_secs
# The longest a paused client is held if nothing resumes it.
PAUSE_MAX_SECS = 120.0
_armed = {}


class Armed:
    """One fault armed under a prefix: the requests it sees and the one it met."""

    def __init__(self, under, fault, pid):
        kind, _, at = fault.partition("@")
        if kind not in ARMED_KINDS:
            raise ValueError(f"`{kind}` is not a fault kind: {', '.join(ARMED_KINDS)}")
        if kind != "trace" and not (at.isdigit() and int(at) >= 1):
            raise ValueError(f"`{fault}`: give KIND@K, K a request's position from 1")
        if kind in ("kill-before", "kill-after", "pause") and not isinstance(pid, int):
            raise ValueError(f"{kind} needs the pid of the process to signal")
        self.under, self.fault, self.kind = under, fault, kind
        self.at = int(at) if kind != "trace" else 0
        self.pid = pid
        self.requests = []
        self.fired_at = None
        # What is still due after the fault met its request: 503s (of a resend, or of the
        # window), or 500s to the resends of a request answered 500 after it applied.
        self.due = 0
        self.target = None
        # A pause: "paused" while its request is held, "resumed" after.
        self.paused = None
        self.resume = threading.Event()

    def status(self):
        out = {"point": self.fault, "fired_at": self.fired_at, "requests": self.requests}
        if self.kind in ("pause", "hold"):
            out["paused"] = self.paused
        return out

    def meet(self, method, path, kinds):
        """What this request meets (an action name, or None); under _counts_lock."""
        n = len(self.requests) + 1
        request = (method, path)
        action = None
        if self.fired_at is not None and self.due > 0:
            # The window: every request under the prefix; after a lost reply: the reads of its
            # key (the client looking it up; a resend of the write itself is served); else
            # the request's own resends.
            looks_up = path == self.target[1] and method in ("HEAD", "GET")
            follows = {"slow-down-window": True, "lose-reply-then-slow-down": looks_up}
            if follows.get(self.kind, request == self.target):
                self.due -= 1
                action = "slow-down" if self.kind != "fail-after-apply" else "internal-error"
        elif n == self.at and self.kind != "trace":
            if self.kind == "head-no-length" and method != "HEAD":
                action = None
            else:
                self.fired_at = n
                action = self.kind
                self.target = request
                self.due = {"slow-down": SLOW_DOWN_ANSWERS - 1,
                            "slow-down-window": WINDOW_REQUESTS - 1,
                            "lose-reply-then-slow-down": RESENDS + 1,
                            "fail-after-apply": RESENDS}.get(self.kind, 0)
                action = {"slow-down-window": "slow-down",
                          "lose-reply-then-slow-down": "lose-reply"}.get(action, action)
        entry = {"n": n, "method": method, "key": path[len(self.under):],
                 "kind": kinds[-1] if kinds else "other"}
        if action:
            entry["fault"] = action
        self.requests.append(entry)
        return action


def target_path(environ, kinds):
    """The key path a request acts on, as an armed prefix is matched against it: a listing's
    prefix (GET /bucket?prefix=P: /bucket/P), a batch delete's first key, else its path."""
    path = environ.get("PATH_INFO", "")
    bucket = path.strip("/").split("/", 1)[0]
    if kinds == ["list"]:
        query = urllib.parse.parse_qs(environ.get("QUERY_STRING", ""))
        return f"/{bucket}/" + (query.get("prefix") or [""])[0]
    if kinds == ["delete"] and environ["REQUEST_METHOD"] == "POST":
        length = int(environ.get("CONTENT_LENGTH") or 0)
        body = environ["wsgi.input"].read(length)
        environ["wsgi.input"] = io.BytesIO(body)
        start = body.find(b"<Key>")
        end = body.find(b"</Key>", start)
        if start >= 0 and end > start:
            return f"/{bucket}/" + body[start + 5:end].decode(errors="replace")
    return path


def armed_for(path):
    for under, armed in _armed.items():
        if path.startswith(under):
            return armed
    return None


# Windows of faults switched on and off (POST /_bench/window), by prefix.
WINDOW_FAULTS = ("slow-down", "lose-reply", "reset", "fail-after-apply")
_windows = {}


def window(environ, start_response):
    """/_bench/window: switch a window of a fault on or off under a prefix; switched off,
    answers how many requests it met."""
    length = int(environ.get("CONTENT_LENGTH") or 0)
    status, answer = "200 OK", {}
    try:
        asked = json.loads(environ["wsgi.input"].read(length) or b"{}")
        under, on = asked["under"], bool(asked["on"])
        if on and asked["fault"] not in WINDOW_FAULTS:
            raise ValueError(f"`{asked['fault']}` is not a window's fault: {', '.join(WINDOW_FAULTS)}")
    except (ValueError, KeyError, TypeError) as e:
        status, answer = "400 Bad Request", {"error": str(e)}
    else:
        key = (under, asked.get("fault"), asked.get("of") or "any")
        with _counts_lock:
            if on:
                _windows[key] = {"fault": key[1], "of": key[2], "met": 0}
                answer = {"on": True}
            else:
                was = _windows.pop(key, None)
                answer = {"on": False, "met": was["met"] if was else 0}
    body = json.dumps(answer).encode()
    start_response(status, [("Content-Type", "application/json"),
                            ("Content-Length", str(len(body)))])
    return [body]


def window_meets(path, kinds):
    """The fault of the window on under `path` that this request meets, if any (counted);
    under _counts_lock."""
    for (under, _, _), w in _windows.items():
        if path.startswith(under) and (w["of"] == "any" or w["of"] in kinds):
            w["met"] += 1
            return w["fault"]
    return None


def control(environ, start_response):
    """/_bench/arm: arm a fault under a prefix, read what it met, or remove it."""
    method = environ["REQUEST_METHOD"]
    query = urllib.parse.parse_qs(environ.get("QUERY_STRING", ""))
    status, answer = "200 OK", {}
    if method == "POST":
        length = int(environ.get("CONTENT_LENGTH") or 0)
        try:
            asked = json.loads(environ["wsgi.input"].read(length) or b"{}")
            armed = Armed(asked["under"], asked["fault"], asked.get("pid"))
        except (ValueError, KeyError, TypeError) as e:
            status, answer = "400 Bad Request", {"error": str(e)}
        else:
            with _counts_lock:
                _armed[armed.under] = armed
            answer = armed.status()
    else:
        under = (query.get("under") or [""])[0]
        with _counts_lock:
            armed = _armed.get(under)
            if armed is not None and method == "DELETE":
                del _armed[under]
                # A client still held is let go: nothing under the prefix waits on it now.
                armed.resume.set()
        if armed is None:
            status, answer = "404 Not Found", {"error": f"nothing is armed under {under}"}
        else:
            answer = armed.status()
    body = json.dumps(answer).encode()
    start_response(status, [("Content-Type", "application/json"),
                            ("Content-Length", str(len(body)))])
    return [body]


def resume(environ, start_response):
    """/_bench/resume: let a paused client go on (its held request then served)."""
    length = int(environ.get("CONTENT_LENGTH") or 0)
    status, answer = "200 OK", {}
    try:
        under = json.loads(environ["wsgi.input"].read(length) or b"{}")["under"]
    except (ValueError, KeyError, TypeError) as e:
        status, answer = "400 Bad Request", {"error": str(e)}
    else:
        with _counts_lock:
            armed = _armed.get(under)
        if armed is None or armed.kind not in ("pause", "hold"):
            status, answer = "404 Not Found", {"error": f"no pause is armed under {under}"}
        else:
            armed.resume.set()
            answer = {"resumed": armed.paused == "paused"}
    body = json.dumps(answer).encode()
    start_response(status, [("Content-Type", "application/json"),
                            ("Content-Length", str(len(body)))])
    return [body]


def internal_error(start_response):
    start_response(
        "500 Internal Server Error",
        [("Content-Type", "application/xml"), ("Content-Length", str(len(INTERNAL_ERROR)))],
    )
    return [INTERNAL_ERROR]


def reset(environ):
    """Close the request's connection with RST at once, and end the request."""
    sock = environ.get("werkzeug.socket")
    if sock is not None:
        # Linger 0, then the socket's descriptor replaced by /dev/null: the kernel closes
        # the connection with RST at once (as a load balancer dropping it), whatever the
        # server's own file objects still hold.
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        devnull = os.open(os.devnull, os.O_RDWR)
        os.dup2(devnull, sock.fileno())
        os.close(devnull)
    raise ConnectionResetError("bench s3-server: reset injected")


def denied_delete(environ):
    """Whether a delete (single, or a batch's body) names a key --deny-delete refuses."""
    if args.deny_delete is None or kinds_of(environ) != ["delete"]:
        return False
    if environ["REQUEST_METHOD"] == "DELETE":
        return args.deny_delete in environ.get("PATH_INFO", "")
    # A batch delete: read its body, and hand it on to moto unchanged.
    length = int(environ.get("CONTENT_LENGTH") or 0)
    body = environ["wsgi.input"].read(length)
    environ["wsgi.input"] = io.BytesIO(body)
    return args.deny_delete.encode() in body


class NetworkStore:
    """WSGI middleware: counts, latency, throttling and resets in front of moto."""

    def __init__(self, app):
        self.app = app

    def unheard(self, environ):
        """Apply the request at the store, its answer made to its end and never sent."""
        def swallowed(status, headers, exc_info=None):
            # A conditional PUT that lost (412): the store decided a race, or a retry.
            if status.startswith("412"):
                count(precondition_failed=1)
            return lambda data: None

        body = self.app(environ, swallowed)
        try:
            for _ in body:
                pass
        finally:
            if hasattr(body, "close"):
                body.close()

    def armed(self, met, armed, environ, start_response):
        """Do what an armed fault (`met`, an action of Armed.meet) does to this request."""
        kinds = kinds_of(environ)
        count(access_key(environ), **{k: 1 for k in kinds})
        if met == "reset":
            count(reset=1)
            reset(environ)
        if met == "kill-before":
            os.kill(armed.pid, signal.SIGKILL)
            reset(environ)
        if met in ("lose-reply", "kill-after"):
            self.unheard(environ)
            count(lost_reply=1)
            if met == "kill-after":
                os.kill(armed.pid, signal.SIGKILL)
            reset(environ)
        if met in ("pause", "hold"):
            if met == "pause":
                os.kill(armed.pid, signal.SIGSTOP)
            with _counts_lock:
                armed.paused = "paused"
            count(paused=1)
            armed.resume.wait(PAUSE_MAX_SECS)
            if met == "pause":
                try:
                    os.kill(armed.pid, signal.SIGCONT)
                except ProcessLookupError:
                    pass
            with _counts_lock:
                armed.paused = "resumed"
            return self.app(environ, start_response)
        if met == "slow-down":
            count(throttled=1)
            start_response(
                "503 Slow Down",
                [("Content-Type", "application/xml"), ("Content-Length", str(len(SLOW_DOWN)))],
            )
            return [SLOW_DOWN]
        if met == "fail-after-apply":
            self.unheard(environ)
            count(failed_after_apply=1)
            return internal_error(start_response)
        if met == "internal-error":
            count(internal_error=1)
            return internal_error(start_response)
        if met == "delay":
            held = {}

            def hold(status, headers, exc_info=None):
                held["reply"] = (status, headers)
                return lambda data: None

            body = b"".join(self.app(environ, hold))
            time.sleep(DELAY_SECS)
            start_response(*held["reply"])
            return [body]
        if met == "head-no-length":
            count(no_length=1)

            def no_length(status, headers, exc_info=None):
                if status.startswith("200"):
                    headers = [(k, v) for k, v in headers if k.lower() != "content-length"]
                    headers.append(("Content-Length", "0"))
                return start_response(status, headers, exc_info)

            return self.app(environ, no_length)
        raise AssertionError(f"armed fault {met} has no action")

    def __call__(self, environ, start_response):
        if environ.get("PATH_INFO") == "/_bench/counts":
            with _counts_lock:
                body = json.dumps(_counts).encode()
                if environ["REQUEST_METHOD"] == "DELETE":
                    _counts.update(zero())
            start_response(
                "200 OK",
                [("Content-Type", "application/json"), ("Content-Length", str(len(body)))],
            )
            return [body]
        if environ.get("PATH_INFO") == "/_bench/arm":
            return control(environ, start_response)
        if environ.get("PATH_INFO") == "/_bench/window":
            return window(environ, start_response)
        if environ.get("PATH_INFO") == "/_bench/resume":
            return resume(environ, start_response)
        kinds = kinds_of(environ)
        target = target_path(environ, kinds) if kinds and (_armed or _windows) else ""
        with _counts_lock:
            armed = armed_for(target) if target else None
            met = armed.meet(environ["REQUEST_METHOD"], target, kinds) if armed else None
            if target and not met:
                met = window_meets(target, kinds)
        if met:
            return self.armed(met, armed, environ, start_response)
        wait = args.latency_ms + _rng.uniform(0.0, args.jitter_ms)
        if wait > 0:
            time.sleep(wait / 1000.0)
        with _counts_lock:
            roll_throttle, roll_reset = _rng.random(), _rng.random()
        if roll_reset < args.reset_rate:
            count(reset=1)
            reset(environ)
        slowed = slowed_after_lost_reply(environ["REQUEST_METHOD"], environ.get("PATH_INFO", ""))
        if roll_throttle < args.throttle_rate or slowed:
            count(throttled=1)
            start_response(
                "503 Slow Down",
                [("Content-Type", "application/xml"), ("Content-Length", str(len(SLOW_DOWN)))],
            )
            return [SLOW_DOWN]
        if denied_delete(environ):
            count(access_key(environ), denied=1)
            start_response(
                "403 Forbidden",
                [("Content-Type", "application/xml"),
                 ("Content-Length", str(len(ACCESS_DENIED)))],
            )
            return [ACCESS_DENIED]
        written = (
            int(environ.get("CONTENT_LENGTH") or 0)
            if "put" in kinds and environ["REQUEST_METHOD"] == "PUT"
            else 0
        )
        count(access_key(environ), written_bytes=written, **{k: 1 for k in kinds})

        no_length = (
            args.head_no_length is not None
            and environ["REQUEST_METHOD"] == "HEAD"
            and args.head_no_length in environ.get("PATH_INFO", "")
        )

        def answered(status, headers, exc_info=None):
            # A conditional PUT that lost (412): the store decided a race, or a retry.
            if status.startswith("412"):
                count(precondition_failed=1)
            if no_length and status.startswith("200"):
                count(no_length=1)
                headers = [(k, v) for k, v in headers if k.lower() != "content-length"]
                headers.append(("Content-Length", "0"))
            return start_response(status, headers, exc_info)

        request = (environ["REQUEST_METHOD"], environ.get("PATH_INFO", ""))
        with _counts_lock:
            resend = request in _failing
        if resend:
            # A resend of a request answered 500 after it applied: 500 again, unapplied.
            count(internal_error=1)
            return internal_error(start_response)
        if kinds and fails_after_apply(kinds, request[1]):
            self.unheard(environ)
            with _counts_lock:
                _failing.add(request)
            count(failed_after_apply=1)
            return internal_error(start_response)
        if kinds and loses_reply(kinds, environ.get("PATH_INFO", "")):
            # Applied at the store, then the connection reset: the client never hears of it.
            self.unheard(environ)
            count(lost_reply=1)
            if args.slow_down_after_lost_reply:
                with _counts_lock:
                    _slow_after[environ.get("PATH_INFO", "")] = args.slow_down_after_lost_reply
            reset(environ)
        body = self.app(environ, answered)
        return Counted(body) if kinds == ["get"] else body


class Counted:
    """A response body that adds its length to read_bytes as it is sent."""

    def __init__(self, body):
        self.body = body
        self.sent = 0

    def __iter__(self):
        for chunk in self.body:
            self.sent += len(chunk)
            count(read_bytes=len(chunk))
            yield chunk

    def close(self):
        if hasattr(self.body, "close"):
            self.body.close()


app = NetworkStore(Upstream(args.upstream) if args.upstream else moto_app())
server = make_server("127.0.0.1", args.port, app, threaded=True)
threading.Thread(target=server.serve_forever, daemon=True).start()
endpoint = f"http://127.0.0.1:{args.port}"
# Setting up the buckets goes around the faults: a direct client on a fresh port would be
# counted, so reset the counts once the buckets exist.
s3 = boto3.client(
    "s3",
    endpoint_url=args.upstream or endpoint,
    region_name="us-east-1",
    aws_access_key_id=os.environ.get("AWS_ACCESS_KEY_ID", "testing") if args.upstream
    else "testing",
    aws_secret_access_key=os.environ.get("AWS_SECRET_ACCESS_KEY", "testing") if args.upstream
    else "testing",
    config=boto3.session.Config(retries={"max_attempts": 20, "mode": "standard"}),
)
for b in args.bucket:
    try:
        s3.create_bucket(Bucket=b)
    except s3.exceptions.BucketAlreadyOwnedByYou:
        pass
ready = "ready"
if args.auth:
    from moto import settings

    iam = boto3.client(
        "iam",
        endpoint_url=endpoint,
        region_name="us-east-1",
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
    )
    iam.create_user(UserName="bench")
    iam.put_user_policy(
        UserName="bench",
        PolicyName="s3",
        PolicyDocument='{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"s3:*","Resource":"*"}]}',
    )
    key = iam.create_access_key(UserName="bench")["AccessKey"]
    settings.INITIAL_NO_AUTH_ACTION_COUNT = 0
    ready = f"ready {key['AccessKeyId']} {key['SecretAccessKey']}"
with _counts_lock:
    _counts.update(zero())
    # The buckets' own requests do not count towards --lose-reply-every either.
    _lose_seen = 0
print(ready, flush=True)
try:
    while True:
        time.sleep(3600)
except KeyboardInterrupt:
    server.shutdown()
