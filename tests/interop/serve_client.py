"""The boto3 S3 client of the serve interop scripts: path-style addressing, SigV4, the
region and credentials `cloudlua serve` was started with (CLOUDLUA_ACCESS_KEY_ID,
CLOUDLUA_SECRET_ACCESS_KEY), retried as `retries` says; `signature` "s3" is the older
signing (SigV2), which boto3 keeps for browser forms (generate_presigned_post). And
the scripts' checks: expect_error (a refusal), check (a condition), run (one named
check that goes on after a failure, noted in `failures`)."""
import os

import boto3
from botocore.config import Config
from botocore.exceptions import ClientError


def s3_client(endpoint, retries, region="jp-east-1", signature="s3v4"):
    return boto3.client(
        "s3",
        endpoint_url=endpoint,
        region_name=region,
        aws_access_key_id=os.environ["CLOUDLUA_ACCESS_KEY_ID"],
        aws_secret_access_key=os.environ["CLOUDLUA_SECRET_ACCESS_KEY"],
        config=Config(signature_version=signature, s3={"addressing_style": "path"}, retries=retries),
    )


def expect_error(code, call, **kwargs):
    """call(**kwargs) fails with the error code `code` (else AssertionError); answers the error's response."""
    try:
        call(**kwargs)
    except ClientError as e:
        got = e.response["Error"]["Code"]
        if got != code:
            raise AssertionError("expected %s, got %s: %s" % (code, got, e.response["Error"].get("Message")))
        return e.response
    raise AssertionError("expected %s, the call succeeded" % code)


failures = []


def check(condition, text):
    if not condition:
        raise AssertionError(text)


def run(name, fn, *args):
    """fn(*args), printed ok or FAIL with its error; a failure is noted in `failures`."""
    try:
        fn(*args)
        print("ok  ", name, flush=True)
    except (AssertionError, ClientError) as e:
        print("FAIL", name + ":", e, flush=True)
        failures.append(name)
