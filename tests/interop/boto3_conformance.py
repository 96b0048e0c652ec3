"""Answers where S3 is exact about a corner, asked through boto3 as a user would.

Run by tests/serve/boto3_conformance_test.sh: python3 boto3_conformance.py ENDPOINT
REGION, with the emulator's credentials in CLOUDLUA_ACCESS_KEY_ID and
CLOUDLUA_SECRET_ACCESS_KEY. Each check runs even when one before it failed; the
script fails when any did, naming each. With REGION us-east-1 only the checks that
depend on it run (S3 there answers a bucket re-created by its owner 200).
"""
import base64
import hashlib
import sys
import urllib.error
import urllib.request
import uuid
import zlib

from botocore.exceptions import ClientError

from serve_client import check, expect_error, failures, run, s3_client

MIB = 1024 * 1024
BUCKET = "conformance"
def b64(digest):
    return base64.b64encode(digest).decode()


def copy_source_conditions(s3):
    """CopyObject and UploadPartCopy honour the x-amz-copy-source-if-* headers: 412
    PreconditionFailed when one does not hold; If-Match true wins over
    If-Unmodified-Since false, and If-None-Match false with If-Modified-Since true is 412."""
    s3.put_object(Bucket=BUCKET, Key="source", Body=b"copied")
    head = s3.head_object(Bucket=BUCKET, Key="source")
    etag, stored, past = head["ETag"], head["LastModified"], "2000-01-01T00:00:00Z"
    source = {"Bucket": BUCKET, "Key": "source"}
    copy = s3.copy_object
    for refused in ({"CopySourceIfMatch": '"0123"'}, {"CopySourceIfNoneMatch": etag},
                    {"CopySourceIfUnmodifiedSince": past}, {"CopySourceIfModifiedSince": stored},
                    {"CopySourceIfNoneMatch": etag, "CopySourceIfModifiedSince": past}):
        try:
            expect_error("PreconditionFailed", copy, Bucket=BUCKET, Key="c", CopySource=source, **refused)
        except AssertionError as e:
            raise AssertionError("%r: %s" % (refused, e))
    check("c" not in [o["Key"] for o in s3.list_objects_v2(Bucket=BUCKET).get("Contents", [])], "a refused copy was made")
    copy(Bucket=BUCKET, Key="c", CopySource=source, CopySourceIfMatch=etag, CopySourceIfUnmodifiedSince=past)
    copy(Bucket=BUCKET, Key="c", CopySource=source, CopySourceIfNoneMatch='"0123"', CopySourceIfModifiedSince=past)
    check(s3.get_object(Bucket=BUCKET, Key="c")["Body"].read() == b"copied", "the copy's bytes")
    upload = s3.create_multipart_upload(Bucket=BUCKET, Key="parts")["UploadId"]
    expect_error("PreconditionFailed", s3.upload_part_copy, Bucket=BUCKET, Key="parts", UploadId=upload, PartNumber=1,
                 CopySource=source, CopySourceIfMatch='"0123"')
    s3.upload_part_copy(Bucket=BUCKET, Key="parts", UploadId=upload, PartNumber=1, CopySource=source,
                        CopySourceIfMatch=etag)
    s3.abort_multipart_upload(Bucket=BUCKET, Key="parts", UploadId=upload)


def part_numbers(s3):
    """GetObject and HeadObject with PartNumber answer x-amz-mp-parts-count for every
    part of a multipart object; a part past the last is 416 InvalidPartNumber, for a
    multipart object and for one made in one piece (part 2)."""
    upload = s3.create_multipart_upload(Bucket=BUCKET, Key="two")["UploadId"]
    tags = [s3.upload_part(Bucket=BUCKET, Key="two", UploadId=upload, PartNumber=n, Body=body)["ETag"]
            for n, body in ((1, b"a" * 5 * MIB), (2, b"tail"))]
    s3.complete_multipart_upload(Bucket=BUCKET, Key="two", UploadId=upload, MultipartUpload={
        "Parts": [{"PartNumber": n + 1, "ETag": t} for n, t in enumerate(tags)]})
    for n in (1, 2):
        head = s3.head_object(Bucket=BUCKET, Key="two", PartNumber=n)
        got = s3.get_object(Bucket=BUCKET, Key="two", PartNumber=n)
        check(head.get("PartsCount") == 2 and got.get("PartsCount") == 2, "part %d: %r %r" % (n, head, got))
    expect_error("InvalidPartNumber", s3.get_object, Bucket=BUCKET, Key="two", PartNumber=3)
    s3.put_object(Bucket=BUCKET, Key="one", Body=b"one piece")
    expect_error("InvalidPartNumber", s3.get_object, Bucket=BUCKET, Key="one", PartNumber=2)


def empty_continuation_token(s3):
    """ListObjectsV2 with continuation-token= (empty) lists from the start, as with none."""
    s3.put_object(Bucket=BUCKET, Key="listed", Body=b"")
    got = s3.list_objects_v2(Bucket=BUCKET, ContinuationToken="")
    check(any(o["Key"] == "listed" for o in got.get("Contents", [])), "listed %r" % got.get("Contents"))


def empty_content_length(s3):
    """A PUT whose Content-Length is empty is 400, as S3 answers a malformed one (not 411)."""
    def blank(request, **_):
        request.headers["Content-Length"] = ""
    s3.meta.events.register_first("before-send.s3.PutObject", blank)
    try:
        try:
            s3.put_object(Bucket=BUCKET, Key="blank", Body=b"body")
            raise AssertionError("a PUT with an empty Content-Length succeeded")
        except ClientError as e:
            status = e.response["ResponseMetadata"]["HTTPStatusCode"]
            check(status == 400, "status %r: %r" % (status, e.response["Error"]))
    finally:
        s3.meta.events.unregister("before-send.s3.PutObject", blank)


def recreate_own_bucket(s3, region):
    """Re-creating a bucket one owns: 200 in us-east-1, 409 BucketAlreadyOwnedByYou elsewhere."""
    s3.create_bucket(Bucket="again")
    if region == "us-east-1":
        s3.create_bucket(Bucket="again")
    else:
        expect_error("BucketAlreadyOwnedByYou", s3.create_bucket, Bucket="again")
    s3.delete_bucket(Bucket="again")


def content_encoding_kept(s3):
    """Content-Encoding is answered as it was sent, list spacing included."""
    s3.put_object(Bucket=BUCKET, Key="coded", Body=b"x", ContentEncoding="deflate, gzip")
    got = s3.head_object(Bucket=BUCKET, Key="coded")["ContentEncoding"]
    check(got == "deflate, gzip", "Content-Encoding %r" % got)


def malformed_checksum(s3):
    """A checksum header that is not base64 of the algorithm's size: S3 answers
    InvalidRequest (ceph/s3-tests issue 644 shows it against S3); a wrong one BadDigest."""
    expect_error("InvalidRequest", s3.put_object, Bucket=BUCKET, Key="sum", Body=b"x", ChecksumSHA256="bad")
    wrong = b64(hashlib.sha256(b"y").digest())
    expect_error("BadDigest", s3.put_object, Bucket=BUCKET, Key="sum", Body=b"x", ChecksumSHA256=wrong)


def completion_checksum(s3):
    """CompleteMultipartUpload's whole-object x-amz-checksum-sha256 is checked against
    the composite (base64 of the SHA-256 of the parts' SHA-256s, then -N; accepted with
    or without the -N): another is BadDigest and completes nothing, one that is not a
    SHA-256's base64 (or -N not a number) InvalidRequest, as is another algorithm's. A
    CRC32 upload takes the whole object's CRC32 too (S3's FULL_OBJECT form)."""
    bodies = [b"b" * 5 * MIB, b"end"]
    upload = s3.create_multipart_upload(Bucket=BUCKET, Key="whole", ChecksumAlgorithm="SHA256")["UploadId"]
    parts = []
    for n, body in enumerate(bodies, 1):
        r = s3.upload_part(Bucket=BUCKET, Key="whole", UploadId=upload, PartNumber=n, Body=body,
                           ChecksumAlgorithm="SHA256")
        parts.append({"PartNumber": n, "ETag": r["ETag"], "ChecksumSHA256": r["ChecksumSHA256"]})
    joined = b"".join(hashlib.sha256(b).digest() for b in bodies)
    composite = b64(hashlib.sha256(joined).digest())
    complete = s3.complete_multipart_upload
    for code, wrong in (("BadDigest", b64(hashlib.sha256(b"".join(bodies)).digest()) + "-2"),
                        ("BadDigest", b64(hashlib.sha256(b"".join(bodies)).digest())),
                        ("BadDigest", composite + "-3"), ("InvalidRequest", "not base64"),
                        ("InvalidRequest", composite + "-x")):
        expect_error(code, complete, Bucket=BUCKET, Key="whole", UploadId=upload,
                     MultipartUpload={"Parts": parts}, ChecksumSHA256=wrong)
    done = complete(Bucket=BUCKET, Key="whole", UploadId=upload, MultipartUpload={"Parts": parts},
                    ChecksumSHA256=composite + "-2")
    check(done.get("ChecksumSHA256") == composite + "-2", "completion's checksum %r" % done.get("ChecksumSHA256"))
    upload = s3.create_multipart_upload(Bucket=BUCKET, Key="whole2", ChecksumAlgorithm="SHA256")["UploadId"]
    r = s3.upload_part(Bucket=BUCKET, Key="whole2", UploadId=upload, PartNumber=1, Body=b"only",
                       ChecksumAlgorithm="SHA256")
    one = b64(hashlib.sha256(hashlib.sha256(b"only").digest()).digest()) + "-1"  # taken without its -1 too
    expect_error("InvalidRequest", complete, Bucket=BUCKET, Key="whole2", UploadId=upload,
                 ChecksumCRC32=b64(zlib.crc32(b"only").to_bytes(4, "big")), MultipartUpload={
                     "Parts": [{"PartNumber": 1, "ETag": r["ETag"], "ChecksumSHA256": r["ChecksumSHA256"]}]})
    complete(Bucket=BUCKET, Key="whole2", UploadId=upload, ChecksumSHA256=one[:-2], MultipartUpload={
        "Parts": [{"PartNumber": 1, "ETag": r["ETag"], "ChecksumSHA256": r["ChecksumSHA256"]}]})
    upload = s3.create_multipart_upload(Bucket=BUCKET, Key="crc", ChecksumAlgorithm="CRC32")["UploadId"]
    crc_parts = []
    for n, body in enumerate(bodies, 1):
        r = s3.upload_part(Bucket=BUCKET, Key="crc", UploadId=upload, PartNumber=n, Body=body, ChecksumAlgorithm="CRC32")
        crc_parts.append({"PartNumber": n, "ETag": r["ETag"], "ChecksumCRC32": r["ChecksumCRC32"]})
    whole = b64(zlib.crc32(b"".join(bodies)).to_bytes(4, "big"))
    complete(Bucket=BUCKET, Key="crc", UploadId=upload, ChecksumCRC32=whole, MultipartUpload={"Parts": crc_parts})


def form_body(fields, content):
    """A multipart/form-data body of fields (in order) then the file; its boundary."""
    boundary = uuid.uuid4().hex
    out = b""
    for name, value in fields.items():
        out += b'--%s\r\nContent-Disposition: form-data; name="%s"\r\n\r\n%s\r\n' % (
            boundary.encode(), name.encode(), value.encode())
    out += b'--%s\r\nContent-Disposition: form-data; name="file"; filename="f.txt"\r\n' % boundary.encode()
    out += b"Content-Type: text/plain\r\n\r\n" + content + b"\r\n--%s--\r\n" % boundary.encode()
    return out, boundary


def post_form(url, fields, content):
    """POSTs the form; answers the status and the body."""
    body, boundary = form_body(fields, content)
    request = urllib.request.Request(url, data=body, method="POST",
                                     headers={"Content-Type": "multipart/form-data; boundary=" + boundary})
    try:
        with urllib.request.urlopen(request) as answer:
            return answer.status, answer.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


def sigv2_form(endpoint):
    """A browser form signed the older way (boto3's generate_presigned_post with
    signature_version "s3": AWSAccessKeyId, policy, signature = HMAC-SHA1 of the
    policy) stores the file; a changed signature is 403 SignatureDoesNotMatch."""
    v2 = s3_client(endpoint, {"max_attempts": 1}, signature="s3")
    post = v2.generate_presigned_post(BUCKET, "form/${filename}", ExpiresIn=300)
    check("AWSAccessKeyId" in post["fields"] and "signature" in post["fields"], "not a V2 form: %r" % post["fields"])
    status, body = post_form(post["url"], post["fields"], b"from a form")
    check(status == 204, "V2 form: %d %r" % (status, body[:300]))
    got = s3_client(endpoint, {"max_attempts": 1}).get_object(Bucket=BUCKET, Key="form/f.txt")["Body"].read()
    check(got == b"from a form", "stored %r" % got)
    bad = dict(post["fields"], signature=b64(b"\0" * 20))
    status, body = post_form(post["url"], bad, b"x")
    check(status == 403 and b"SignatureDoesNotMatch" in body, "wrong V2 signature: %d %r" % (status, body[:300]))


def main(endpoint, region):
    s3 = s3_client(endpoint, {"max_attempts": 1}, region=region)
    if region == "us-east-1":
        run("recreate_own_bucket (us-east-1)", recreate_own_bucket, s3, region)
    else:
        s3.create_bucket(Bucket=BUCKET)
        for name, fn, args in (("copy_source_conditions", copy_source_conditions, (s3,)),
                               ("part_numbers", part_numbers, (s3,)),
                               ("empty_continuation_token", empty_continuation_token, (s3,)),
                               ("empty_content_length", empty_content_length, (s3,)),
                               ("recreate_own_bucket", recreate_own_bucket, (s3, region)),
                               ("content_encoding_kept", content_encoding_kept, (s3,)),
                               ("malformed_checksum", malformed_checksum, (s3,)),
                               ("completion_checksum", completion_checksum, (s3,)),
                               ("sigv2_form", sigv2_form, (endpoint,))):
            run(name, fn, *args)
    if failures:
        sys.exit("FAIL: " + ", ".join(failures))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
