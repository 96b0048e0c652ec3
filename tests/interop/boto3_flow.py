"""What a boto3 user does against an S3 endpoint, step by step, failing loudly.

Run by tests/serve/boto3_test.sh (Debian's boto3) and boto3_current_test.sh (a current
one): python3 boto3_flow.py ENDPOINT WORKDIR, with the emulator's credentials in
CLOUDLUA_ACCESS_KEY_ID and CLOUDLUA_SECRET_ACCESS_KEY. A current boto3 (1.36 and
later) sends a CRC32 with every part of upload_file and again in the completion; the
object's composite checksum is then checked too. Every boto3 completes an upload
created with ChecksumAlgorithm SHA256 with right, wrong and missing part checksums.
"""
import base64
import filecmp
import hashlib
import os
import sys
import urllib.error
import urllib.request
import zlib

import boto3
from boto3.s3.transfer import TransferConfig
from botocore import UNSIGNED
from botocore.config import Config
from botocore.exceptions import ClientError

from serve_client import expect_error, s3_client

MIB = 1024 * 1024


def step(text):
    print("---", text, flush=True)


def check(condition, text):
    if not condition:
        sys.exit("FAIL: " + text)


def composite(raw_checksums):
    """S3's composite checksum of parts: the checksum of their raw checksums, then -N."""
    joined = b"".join(raw_checksums)
    return "%s-%d" % (base64.b64encode(hashlib.sha256(joined).digest()).decode(), len(raw_checksums))


def crc32_composite(path, part_size):
    """The composite CRC32 of a file uploaded in parts of part_size."""
    raws = []
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(part_size), b""):
            raws.append(zlib.crc32(chunk).to_bytes(4, "big"))
    joined = b"".join(raws)
    return "%s-%d" % (base64.b64encode(zlib.crc32(joined).to_bytes(4, "big")).decode(), len(raws))


def sends_part_checksums():
    """Whether this boto3's upload_file sends a CRC32 with each part (s3transfer 0.11+)."""
    import s3transfer.utils
    return hasattr(s3transfer.utils, "set_default_checksum_algorithm")


def checksum_completion(s3, bucket):
    """An upload created with ChecksumAlgorithm SHA256: a wrong part checksum in the
    completion is InvalidPart, a missing one InvalidRequest, the right ones complete it
    with the composite checksum, which head and get return with ChecksumMode ENABLED."""
    key = "sha256 parts.bin"
    bodies = [os.urandom(5 * MIB), b"the last part, short"]
    upload = s3.create_multipart_upload(Bucket=bucket, Key=key, ChecksumAlgorithm="SHA256")["UploadId"]
    parts = []
    for n, body in enumerate(bodies, 1):
        r = s3.upload_part(Bucket=bucket, Key=key, UploadId=upload, PartNumber=n, Body=body, ChecksumAlgorithm="SHA256")
        check(r.get("ChecksumSHA256") == base64.b64encode(hashlib.sha256(body).digest()).decode(), "part %d's checksum" % n)
        parts.append({"PartNumber": n, "ETag": r["ETag"], "ChecksumSHA256": r["ChecksumSHA256"]})
    swapped = [dict(parts[0], ChecksumSHA256=parts[1]["ChecksumSHA256"]), parts[1]]
    complete = s3.complete_multipart_upload
    expect_error("InvalidPart", complete, Bucket=bucket, Key=key, UploadId=upload, MultipartUpload={"Parts": swapped})
    bare = [{"PartNumber": p["PartNumber"], "ETag": p["ETag"]} for p in parts]
    expect_error("InvalidRequest", complete, Bucket=bucket, Key=key, UploadId=upload, MultipartUpload={"Parts": bare})
    done = complete(Bucket=bucket, Key=key, UploadId=upload, MultipartUpload={"Parts": parts})
    expected = composite([hashlib.sha256(b).digest() for b in bodies])
    check(done.get("ChecksumSHA256") == expected, "completion's checksum %r, not %r" % (done.get("ChecksumSHA256"), expected))
    head = s3.head_object(Bucket=bucket, Key=key, ChecksumMode="ENABLED")
    check(head.get("ChecksumSHA256") == expected, "head's checksum %r" % head.get("ChecksumSHA256"))
    got = s3.get_object(Bucket=bucket, Key=key, ChecksumMode="ENABLED")
    check(got.get("ChecksumSHA256") == expected, "get's checksum %r" % got.get("ChecksumSHA256"))
    check(got["Body"].read() == b"".join(bodies), "the object is not its parts joined")
    s3.delete_object(Bucket=bucket, Key=key)


def supports(s3, operation, member):
    """Whether this boto3's model has `member` in `operation`'s input (PutObject's IfNoneMatch came in 2024)."""
    shape = s3.meta.service_model.operation_model(operation).input_shape
    return member in shape.members


def metadata_and_conditions(s3, bucket, big, parts):
    """Content headers and metadata set by put_object and upload_file (multipart) and
    read back; copy_object from a key with '+', '=', ' ', '%' and 'u-umlaut', COPY and
    REPLACE; conditional GETs (304, 412, S3's precedence) and conditional writes."""
    key = "meta/a+b=c 50% \u00fc.txt"
    s3.put_object(Bucket=bucket, Key=key, Body=b"hello", ContentType="text/plain", CacheControl="max-age=5",
                  ContentDisposition='attachment; filename="a%20b.txt"', Metadata={"Mtime": "17", "empty": ""})
    head = s3.head_object(Bucket=bucket, Key=key)
    check(head["ContentType"] == "text/plain" and head["CacheControl"] == "max-age=5", "head: %r" % head)
    check(head["ContentDisposition"] == 'attachment; filename="a%20b.txt"', "disposition: %r" % head)
    check(head["Metadata"] == {"mtime": "17", "empty": ""}, "metadata: %r" % head["Metadata"])
    s3.upload_file(big, bucket, "meta/big", Config=parts, ExtraArgs={"ContentType": "application/x-big", "Metadata": {"k": "v"}})
    head = s3.head_object(Bucket=bucket, Key="meta/big")
    check(head["ContentType"] == "application/x-big" and head["Metadata"] == {"k": "v"}, "multipart: %r" % head)
    s3.copy_object(Bucket=bucket, Key="meta/copy", CopySource={"Bucket": bucket, "Key": key})
    check(s3.head_object(Bucket=bucket, Key="meta/copy")["Metadata"] == {"mtime": "17", "empty": ""}, "COPY lost the metadata")
    s3.copy_object(Bucket=bucket, Key="meta/copy", CopySource={"Bucket": bucket, "Key": key},
                   MetadataDirective="REPLACE", ContentType="text/csv", Metadata={"other": "1"})
    head = s3.head_object(Bucket=bucket, Key="meta/copy")
    check(head["ContentType"] == "text/csv" and head["Metadata"] == {"other": "1"}, "REPLACE: %r" % head)
    etag = s3.head_object(Bucket=bucket, Key=key)["ETag"]
    expect_error("304", s3.get_object, Bucket=bucket, Key=key, IfNoneMatch=etag)
    expect_error("PreconditionFailed", s3.get_object, Bucket=bucket, Key=key, IfMatch='"0123"')
    check(s3.get_object(Bucket=bucket, Key=key, IfMatch=etag.strip('"'),
                        IfUnmodifiedSince="2000-01-01T00:00:00Z")["Body"].read() == b"hello",
          "If-Match true with If-Unmodified-Since false must answer the object")
    if supports(s3, "PutObject", "IfNoneMatch"):
        expect_error("PreconditionFailed", s3.put_object, Bucket=bucket, Key=key, Body=b"x", IfNoneMatch="*")
        s3.put_object(Bucket=bucket, Key="meta/lock", Body=b"x", IfNoneMatch="*")
        expect_error("PreconditionFailed", s3.put_object, Bucket=bucket, Key="meta/lock", Body=b"y", IfMatch='"0123"')
    for k in (key, "meta/big", "meta/copy", "meta/lock"):
        s3.delete_object(Bucket=bucket, Key=k)


def overrides_parts_anonymous(s3, endpoint, bucket, big):
    """A presigned GET with response-* overrides answers those headers; PartNumber on
    head and get answers the part (206, PartsCount) of the 3-part object, part 1 of a
    one-piece object is all of it, part 4 InvalidPartNumber; an unsigned request is
    AccessDenied, as S3 answers an anonymous one on a private bucket."""
    url = s3.generate_presigned_url("get_object", Params={
        "Bucket": bucket, "Key": "small.txt", "ResponseContentType": "text/x-override",
        "ResponseContentDisposition": 'attachment; filename="x.txt"', "ResponseCacheControl": "no-store",
        "ResponseContentLanguage": "ja", "ResponseExpires": "Wed, 01 Dec 2094 16:00:00 GMT"}, ExpiresIn=60)
    with urllib.request.urlopen(url) as answer:
        h = answer.headers
        check(answer.read() == b"hello from boto3\n", "presigned GET's body")
        check(h["Content-Type"] == "text/x-override", "response-content-type: %r" % h["Content-Type"])
        check(h["Content-Disposition"] == 'attachment; filename="x.txt"', "disposition: %r" % h["Content-Disposition"])
        check(h["Cache-Control"] == "no-store" and h["Content-Language"] == "ja", "cache/language: %r" % dict(h))
        check(h["Expires"] == "Wed, 01 Dec 2094 16:00:00 GMT", "expires: %r" % h["Expires"])
    got = s3.get_object(Bucket=bucket, Key="small.txt", ResponseContentType="text/csv")
    check(got["ContentType"] == "text/csv", "get_object ResponseContentType: %r" % got["ContentType"])
    key, size = "dir/big file.bin", 12 * MIB + 9
    head = s3.head_object(Bucket=bucket, Key=key, PartNumber=3)
    check(head["ResponseMetadata"]["HTTPStatusCode"] == 206, "head part 3: status %r" % head["ResponseMetadata"])
    check(head["PartsCount"] == 3 and head["ContentLength"] == 2 * MIB + 9, "head part 3: %r" % head)
    got = s3.get_object(Bucket=bucket, Key=key, PartNumber=2)
    check(got["ContentRange"] == "bytes %d-%d/%d" % (5 * MIB, 10 * MIB - 1, size), "part 2: %r" % got["ContentRange"])
    with open(big, "rb") as f:
        f.seek(5 * MIB)
        check(got["Body"].read() == f.read(5 * MIB), "part 2's bytes")
    expect_error("InvalidPartNumber", s3.get_object, Bucket=bucket, Key=key, PartNumber=4)
    one = s3.head_object(Bucket=bucket, Key="small.txt", PartNumber=1)
    check(one["ContentLength"] == 17 and "PartsCount" not in one, "part 1 of a one-piece object: %r" % one)
    anonymous = boto3.client("s3", endpoint_url=endpoint, region_name="jp-east-1",
                             config=Config(signature_version=UNSIGNED, s3={"addressing_style": "path"}))
    expect_error("AccessDenied", anonymous.get_object, Bucket=bucket, Key="no such key")
    expect_error("AccessDenied", anonymous.get_object, Bucket=bucket, Key="small.txt")


def main(endpoint, work):
    s3 = s3_client(endpoint, retries={"max_attempts": 1})
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
    if sends_part_checksums():
        crc = s3.head_object(Bucket=bucket, Key="dir/big file.bin", ChecksumMode="ENABLED").get("ChecksumCRC32")
        check(crc == crc32_composite(big, 5 * MIB), "upload_file's object has checksum %r" % crc)

    step("complete_multipart_upload with part checksums: wrong, missing, right")
    checksum_completion(s3, bucket)

    step("content headers and metadata, copies from an odd key, conditional requests")
    metadata_and_conditions(s3, bucket, big, parts)

    step("list_objects_v2 through its paginator, a page per key")
    pages = s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, PaginationConfig={"PageSize": 1})
    listed = [(o["Key"], o["Size"]) for page in pages for o in page.get("Contents", [])]
    check(listed == [("dir/big file.bin", 12 * MIB + 9), ("small.txt", 17)], "listed %r" % listed)

    step("download_file both (ranged GETs for the big one) and compare")
    s3.download_file(bucket, "small.txt", small + ".back")
    s3.download_file(bucket, "dir/big file.bin", big + ".back", Config=parts)
    check(filecmp.cmp(small, small + ".back", shallow=False), "small object differs")
    check(filecmp.cmp(big, big + ".back", shallow=False), "big object differs")

    step("presigned GET with response-* overrides, PartNumber, an anonymous GET")
    overrides_parts_anonymous(s3, endpoint, bucket, big)

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
    print("boto3 %s flow: ok" % boto3.__version__)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
