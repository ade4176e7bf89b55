#!/usr/bin/env python3
"""Conditional PUT under races: RACES races of WRITERS writers, each writer a thread of its
own with its own connection, all putting one new key with `If-None-Match: *` at once (a
barrier releases them together). A store that keeps the promise lets exactly one win each
race; the others are answered 412 Precondition Failed. Prints, per store, how many races
had 0, 1, 2, ... winners, and the other answers (errors) it gave.

    put-races.py ENDPOINT [ENDPOINT...] [--races 1000] [--writers 8] [--bucket bench]

ENDPOINT is NAME=URL (e.g. moto=http://127.0.0.1:9000). Credentials from
AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY (default testing/testing).
Run by scripts/figures/put-races.sh, which starts the three stores.
"""
import argparse
import collections
import os
import threading
import uuid

import boto3
import botocore.config
import botocore.exceptions

p = argparse.ArgumentParser()
p.add_argument("endpoints", nargs="+")
p.add_argument("--races", type=int, default=1000)
p.add_argument("--writers", type=int, default=8)
p.add_argument("--bucket", default="bench")
a = p.parse_args()


def client(url):
    return boto3.client(
        "s3",
        endpoint_url=url,
        region_name="us-east-1",
        aws_access_key_id=os.environ.get("AWS_ACCESS_KEY_ID", "testing"),
        aws_secret_access_key=os.environ.get("AWS_SECRET_ACCESS_KEY", "testing"),
        config=botocore.config.Config(retries={"max_attempts": 1}, max_pool_connections=2),
    )


def races(name, url):
    clients = [client(url) for _ in range(a.writers)]
    winners = collections.Counter()
    other = collections.Counter()
    prefix = f"races/{uuid.uuid4().hex}"
    for r in range(a.races):
        key = f"{prefix}/{r}"
        barrier = threading.Barrier(a.writers)
        won = []

        def put(w):
            barrier.wait()
            try:
                clients[w].put_object(Bucket=a.bucket, Key=key, Body=f"writer {w}".encode(),
                                      IfNoneMatch="*")
                won.append(w)
            except botocore.exceptions.ClientError as e:
                code = e.response.get("Error", {}).get("Code", "?")
                status = e.response.get("ResponseMetadata", {}).get("HTTPStatusCode")
                if status != 412:
                    other[f"{status} {code}"] += 1
            except Exception as e:  # a connection that broke
                other[type(e).__name__] += 1

        threads = [threading.Thread(target=put, args=(w,)) for w in range(a.writers)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        winners[len(won)] += 1
        # The key holds the winner's body.
        if len(won) == 1:
            body = clients[0].get_object(Bucket=a.bucket, Key=key)["Body"].read().decode()
            if body != f"writer {won[0]}":
                other["the key holds another writer's body"] += 1
    print(f"{name}: {a.races} races of {a.writers} writers; winners per race: "
          + ", ".join(f"{k}: {winners[k]}" for k in sorted(winners))
          + ("; other answers: " + ", ".join(f"{k} x{v}" for k, v in other.items()) if other else ""),
          flush=True)


for e in a.endpoints:
    name, url = e.split("=", 1)
    races(name, url)
