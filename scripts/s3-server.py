#!/usr/bin/env python3
"""A real S3-compatible server on 127.0.0.1 for bench's S3 tests: moto's server mode.

    python3 scripts/s3-server.py --port 9000 --bucket bench [--bucket other] [--ignore-conditional-put] [--auth]

moto's put_object checks "exists" and then writes without a lock, so two racing
If-None-Match writers can both win; every PUT is serialised here so that Lance's commit
safety holds. Nothing is persisted: the buckets are created on start. With
--ignore-conditional-put the server drops If-None-Match (a store that does not honour
conditional PUT, for the preflight test). With --auth it checks credentials: it creates an
IAM user allowed s3:* and prints its key pair after "ready"; any other key is refused.
Prints "ready" once it serves requests.
Needs: pip install 'moto[server]==5.1.22'
"""
import argparse
import threading
import time

import boto3
from moto.s3.responses import S3Response
from moto.server import ThreadedMotoServer

parser = argparse.ArgumentParser()
parser.add_argument("--port", type=int, default=9000)
parser.add_argument("--bucket", action="append", default=[])
parser.add_argument("--ignore-conditional-put", action="store_true")
parser.add_argument("--auth", action="store_true")
args = parser.parse_args()

_lock = threading.Lock()
_put_object = S3Response.put_object


def put_object(self):
    if args.ignore_conditional_put:
        self.headers = {
            k: v for k, v in self.headers.items() if k.lower() != "if-none-match"
        }
    with _lock:
        return _put_object(self)


S3Response.put_object = put_object

server = ThreadedMotoServer(ip_address="127.0.0.1", port=args.port, verbose=False)
server.start()
endpoint = f"http://127.0.0.1:{args.port}"
s3 = boto3.client(
    "s3",
    endpoint_url=endpoint,
    region_name="us-east-1",
    aws_access_key_id="testing",
    aws_secret_access_key="testing",
)
for b in args.bucket:
    s3.create_bucket(Bucket=b)
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
print(ready, flush=True)
try:
    while True:
        time.sleep(3600)
except KeyboardInterrupt:
    server.stop()
