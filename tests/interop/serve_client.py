"""The boto3 S3 client of the serve interop scripts: path-style addressing, SigV4, the
region and credentials `cloudlua serve` was started with (CLOUDLUA_ACCESS_KEY_ID,
CLOUDLUA_SECRET_ACCESS_KEY), retried as `retries` says; `signature` "s3" is the older
signing (SigV2), which boto3 keeps for browser forms (generate_presigned_post)."""
import os

import boto3
from botocore.config import Config


def s3_client(endpoint, retries, region="jp-east-1", signature="s3v4"):
    return boto3.client(
        "s3",
        endpoint_url=endpoint,
        region_name=region,
        aws_access_key_id=os.environ["CLOUDLUA_ACCESS_KEY_ID"],
        aws_secret_access_key=os.environ["CLOUDLUA_SECRET_ACCESS_KEY"],
        config=Config(signature_version=signature, s3={"addressing_style": "path"}, retries=retries),
    )
