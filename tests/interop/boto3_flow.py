"""What a boto3 user does against an S3 endpoint, step by step, failing loudly.

Run by tests/serve/boto3_test.sh: python3 boto3_flow.py ENDPOINT WORKDIR, with the
emulator's credentials in CLOUDLUA_ACCESS_KEY_ID and CLOUDLUA_SECRET_ACCESS_KEY.
"""
import filecmp
import os
import sys

import boto3
from boto3.s3.transfer import TransferConfig
from botocore.config import Config
from botocore.exceptions import ClientError

MIB = 1024 * 1024


def step(text):
    print("---", text, flush=True)


def check(condition, text):
    if not condition:
        sys.exit("FAIL: " + text)


def main(endpoint, work):
    s3 = boto3.client(
        "s3",
        endpoint_url=endpoint,
        region_name="jp-east-1",
        aws_access_key_id=os.environ["CLOUDLUA_ACCESS_KEY_ID"],
        aws_secret_access_key=os.environ["CLOUDLUA_SECRET_ACCESS_KEY"],
        config=Config(signature_version="s3v4", s3={"addressing_style": "path"}, retries={"max_attempts": 1}),
    )
    small, big = os.path.join(work, "small.txt"), os.path.join(work, "big.bin")
    with open(small, "wb") as f:
        f.write(b"hello from boto3\n")
    with open(big, "wb") as f:
        f.write(os.urandom(12 * MIB + 9))
    bucket = "boto3-interop"

    step("create_bucket, head_bucket, list_buckets")
    s3.create_bucket(Bucket=bucket)
    s3.head_bucket(Bucket=bucket)
    check(bucket in [b["Name"] for b in s3.list_buckets()["Buckets"]], "list_buckets lacks the bucket")

    step("put_object (small), upload_file (12 MiB in 5 MiB parts)")
    s3.put_object(Bucket=bucket, Key="small.txt", Body=open(small, "rb").read())
    parts = TransferConfig(multipart_threshold=5 * MIB, multipart_chunksize=5 * MIB, max_concurrency=4)
    s3.upload_file(big, bucket, "dir/big file.bin", Config=parts)
    etag = s3.head_object(Bucket=bucket, Key="dir/big file.bin")["ETag"]
    check(etag.endswith('-3"'), "the 12 MiB upload was not 3 parts: ETag " + etag)

    step("list_objects_v2 through its paginator, a page per key")
    pages = s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, PaginationConfig={"PageSize": 1})
    listed = [(o["Key"], o["Size"]) for page in pages for o in page.get("Contents", [])]
    check(listed == [("dir/big file.bin", 12 * MIB + 9), ("small.txt", 17)], "listed %r" % listed)

    step("download_file both (ranged GETs for the big one) and compare")
    s3.download_file(bucket, "small.txt", small + ".back")
    s3.download_file(bucket, "dir/big file.bin", big + ".back", Config=parts)
    check(filecmp.cmp(small, small + ".back", shallow=False), "small object differs")
    check(filecmp.cmp(big, big + ".back", shallow=False), "big object differs")

    step("delete_object both, a missing key's head is a 404, delete_bucket")
    s3.delete_object(Bucket=bucket, Key="small.txt")
    s3.delete_objects(Bucket=bucket, Delete={"Objects": [{"Key": "dir/big file.bin"}]})
    try:
        s3.head_object(Bucket=bucket, Key="small.txt")
        check(False, "head_object of a deleted key succeeded")
    except ClientError as e:
        check(e.response["Error"]["Code"] in ("404", "NoSuchKey"), "head of a deleted key: %r" % e.response["Error"])
    check(s3.list_objects_v2(Bucket=bucket)["KeyCount"] == 0, "objects left after deleting")
    s3.delete_bucket(Bucket=bucket)
    check(bucket not in [b["Name"] for b in s3.list_buckets()["Buckets"]], "the bucket is still listed")
    print("boto3 flow: ok")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
