"""A boto3 suite using cloudlua serve's control plane (docs/emulator.md, "The control
plane"): requests to /_cloudlua/ signed with botocore's own S3SigV4Auth (its SigV4Auth plus x-amz-content-sha256), as any non-Lua
test suite would sign them. It injects a 503 on GetObject, sees boto3 get it, advances
the platform's clock an hour (the LastModified of what is put after), and checks an unsigned control
request is refused (403) and changes nothing. Usage: boto3_control.py STORAGE_URL
"""
import json
import os
import sys
import urllib.error
import urllib.request

from botocore.auth import S3SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials
from botocore.exceptions import ClientError

from serve_client import s3_client


def check(condition, text):
    if not condition:
        sys.exit("FAIL: " + text)


def control(endpoint, operation, args=None, signed=True):
    """POSTs a control request; (status, answer as JSON or the raw body)."""
    body = json.dumps(args or {}).encode()
    url = endpoint + "/_cloudlua/" + operation
    request = AWSRequest(method="POST", url=url, data=body, headers={"Content-Type": "application/json"})
    if signed:
        credentials = Credentials(os.environ["CLOUDLUA_ACCESS_KEY_ID"], os.environ["CLOUDLUA_SECRET_ACCESS_KEY"])
        S3SigV4Auth(credentials, "s3", "jp-east-1").add_auth(request)  # SigV4Auth with the payload hash S3 needs
    prepared = request.prepare()
    sent = urllib.request.Request(url, data=body, headers=dict(prepared.headers), method="POST")
    try:
        with urllib.request.urlopen(sent, timeout=30) as answer:
            return answer.status, json.loads(answer.read() or b"{}")
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def main(endpoint):
    s3 = s3_client(endpoint, retries={"total_max_attempts": 1})  # the 503 not retried
    s3.create_bucket(Bucket="control")
    s3.put_object(Bucket="control", Key="k", Body=b"v")

    print("--- a 503 on GetObject, injected over the control plane")
    status, _ = control(endpoint, "fault", {"operation": "GetObject", "status": 503, "code": "SlowDown"})
    check(status == 200, "fault: status %s" % status)
    try:
        s3.get_object(Bucket="control", Key="k")
        check(False, "GetObject should have failed with the injected 503")
    except ClientError as e:
        check(e.response["ResponseMetadata"]["HTTPStatusCode"] == 503, "status %s" % e.response)
        check(e.response["Error"]["Code"] == "SlowDown", "code %s" % e.response["Error"])
    check(s3.get_object(Bucket="control", Key="k")["Body"].read() == b"v", "the fault is used up")

    print("--- the clock advanced an hour: what boto3 sees of it")
    status, _ = control(endpoint, "configure", {"real_time": False})
    check(status == 200, "configure: status %s" % status)
    before = s3.head_object(Bucket="control", Key="k")["LastModified"]
    status, _ = control(endpoint, "advance", {"seconds": 3600})
    check(status == 200, "advance: status %s" % status)
    s3.put_object(Bucket="control", Key="later", Body=b"w")
    after = s3.head_object(Bucket="control", Key="later")["LastModified"]
    check((after - before).total_seconds() >= 3600, "LastModified %s then %s" % (before, after))
    status, requests = control(endpoint, "requests")
    check(requests.get("GetObject") == 2, "requests: %s" % requests)

    print("--- an unsigned control request is refused and changes nothing")
    status, body = control(endpoint, "reset", signed=False)
    check(status == 403, "unsigned reset: status %s" % status)
    check("<Error>" in body, "no S3 error body: %s" % body)
    check(s3.get_object(Bucket="control", Key="k")["Body"].read() == b"v", "a refused reset changed the platform")
    print("boto3_control: ok")


if __name__ == "__main__":
    main(sys.argv[1])
