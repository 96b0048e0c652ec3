"""S3's access rules asked through boto3 as a user would: canned ACLs and grants on
objects and buckets, anonymous (unsigned) requests, Object Ownership, and a browser
form's acl field.

Run by tests/serve/boto3_access_test.sh: python3 boto3_access.py ENDPOINT, with the
emulator's credentials in CLOUDLUA_ACCESS_KEY_ID and CLOUDLUA_SECRET_ACCESS_KEY. It
leaves the bucket "access" holding public.txt (public-read) and private.txt (private),
which the shell script then fetches with an anonymous curl (before and after a
restart of serve --state). Each check runs even when one before it failed; the script
fails when any did, naming each.
"""
import sys

from botocore import UNSIGNED
from botocore.config import Config
from botocore.exceptions import ClientError
import boto3

from boto3_conformance import post_form
from serve_client import check, expect_error, failures, run, s3_client

BUCKET = "access"
ALL_USERS = "http://acs.amazonaws.com/groups/global/AllUsers"
AUTHENTICATED = "http://acs.amazonaws.com/groups/global/AuthenticatedUsers"
def anonymous_client(endpoint):
    """boto3 sending unsigned requests, as for a public bucket (--no-sign-request)."""
    return boto3.client("s3", endpoint_url=endpoint, region_name="jp-east-1",
                        config=Config(signature_version=UNSIGNED, s3={"addressing_style": "path"},
                                      retries={"max_attempts": 1}))


def groups(acl, permission):
    """The group URIs granted `permission` in a Get*Acl answer."""
    return [g["Grantee"].get("URI") for g in acl["Grants"]
            if g["Grantee"]["Type"] == "Group" and g["Permission"] == permission]


def readable(anon, bucket, key):
    """Whether an anonymous GetObject of bucket/key answers its bytes (else AccessDenied)."""
    try:
        return anon.get_object(Bucket=bucket, Key=key)["Body"].read()
    except ClientError as e:
        check(e.response["Error"]["Code"] == "AccessDenied", "anonymous GET %s: %s" % (key, e))
        return None


def object_acls(s3, anon):
    """A canned ACL at PutObject, CopyObject and CreateMultipartUpload, and through
    PutObjectAcl, decides what an anonymous GET gets; GetObjectAcl answers the grants."""
    s3.put_object(Bucket=BUCKET, Key="public.txt", Body=b"for everyone", ACL="public-read")
    s3.put_object(Bucket=BUCKET, Key="private.txt", Body=b"for the owner")
    acl = s3.get_object_acl(Bucket=BUCKET, Key="public.txt")
    check(groups(acl, "READ") == [ALL_USERS], "public-read's grants: %r" % acl["Grants"])
    check(any(g["Permission"] == "FULL_CONTROL" and g["Grantee"].get("ID") == acl["Owner"]["ID"]
              for g in acl["Grants"]), "the owner's FULL_CONTROL: %r" % acl["Grants"])
    check(readable(anon, BUCKET, "public.txt") == b"for everyone", "public-read is not readable anonymously")
    check(readable(anon, BUCKET, "private.txt") is None, "private is readable anonymously")
    check(groups(s3.get_object_acl(Bucket=BUCKET, Key="private.txt"), "READ") == [], "private has a group grant")
    s3.put_object(Bucket=BUCKET, Key="later.txt", Body=b"later")
    s3.put_object_acl(Bucket=BUCKET, Key="later.txt", ACL="public-read")
    check(readable(anon, BUCKET, "later.txt") == b"later", "PutObjectAcl public-read not applied")
    s3.put_object_acl(Bucket=BUCKET, Key="later.txt", ACL="private")
    check(readable(anon, BUCKET, "later.txt") is None, "PutObjectAcl private not applied")
    s3.copy_object(Bucket=BUCKET, Key="copied.txt", CopySource={"Bucket": BUCKET, "Key": "private.txt"},
                   ACL="public-read")
    check(readable(anon, BUCKET, "copied.txt") == b"for the owner", "CopyObject's ACL not applied")
    upload = s3.create_multipart_upload(Bucket=BUCKET, Key="parts.txt", ACL="public-read")["UploadId"]
    etag = s3.upload_part(Bucket=BUCKET, Key="parts.txt", UploadId=upload, PartNumber=1, Body=b"in parts")["ETag"]
    check(readable(anon, BUCKET, "parts.txt") is None, "an unfinished upload is readable")
    s3.complete_multipart_upload(Bucket=BUCKET, Key="parts.txt", UploadId=upload,
                                 MultipartUpload={"Parts": [{"PartNumber": 1, "ETag": etag}]})
    check(readable(anon, BUCKET, "parts.txt") == b"in parts", "CreateMultipartUpload's ACL not applied")
    s3.put_object(Bucket=BUCKET, Key="signed-in.txt", Body=b"x", ACL="authenticated-read")
    check(groups(s3.get_object_acl(Bucket=BUCKET, Key="signed-in.txt"), "READ") == [AUTHENTICATED],
          "authenticated-read's grants")
    check(readable(anon, BUCKET, "signed-in.txt") is None, "authenticated-read is readable anonymously")
    check(s3.get_object(Bucket=BUCKET, Key="signed-in.txt")["Body"].read() == b"x", "the owner reads its object")


def object_grants(s3, anon):
    """Grants in full: the x-amz-grant-* headers and an AccessControlPolicy body."""
    s3.put_object(Bucket=BUCKET, Key="granted.txt", Body=b"granted", GrantRead='uri="%s"' % ALL_USERS)
    check(readable(anon, BUCKET, "granted.txt") == b"granted", "GrantRead for AllUsers not applied")
    acl = s3.get_object_acl(Bucket=BUCKET, Key="granted.txt")
    owner = acl["Owner"]
    s3.put_object_acl(Bucket=BUCKET, Key="granted.txt", AccessControlPolicy={
        "Owner": owner,
        "Grants": [{"Grantee": {"Type": "CanonicalUser", "ID": owner["ID"]}, "Permission": "FULL_CONTROL"}]})
    check(readable(anon, BUCKET, "granted.txt") is None, "an AccessControlPolicy without AllUsers left it public")
    s3.put_object_acl(Bucket=BUCKET, Key="granted.txt", AccessControlPolicy={
        "Owner": owner,
        "Grants": [{"Grantee": {"Type": "CanonicalUser", "ID": owner["ID"]}, "Permission": "FULL_CONTROL"},
                   {"Grantee": {"Type": "Group", "URI": ALL_USERS}, "Permission": "READ"}]})
    check(readable(anon, BUCKET, "granted.txt") == b"granted", "an AccessControlPolicy with AllUsers READ")
    s3.put_object_acl(Bucket=BUCKET, Key="granted.txt", GrantFullControl='id="%s"' % owner["ID"])
    check(readable(anon, BUCKET, "granted.txt") is None, "GrantFullControl to the owner left it public")
    expect_error("InvalidArgument", s3.put_object_acl, Bucket=BUCKET, Key="granted.txt",
                 GrantRead='uri="http://acs.amazonaws.com/groups/global/Nobody"')
    expect_error("InvalidRequest", s3.put_object_acl, Bucket=BUCKET, Key="granted.txt", ACL="public-read",
                 GrantRead='uri="%s"' % ALL_USERS)


def anonymous_codes(s3, anon):
    """S3's codes for an anonymous request: NoSuchBucket for a missing bucket; for a
    missing key, AccessDenied unless the bucket lets it list (then NoSuchKey); writes
    and ListBuckets AccessDenied."""
    expect_error("NoSuchBucket", anon.get_object, Bucket="no-such-bucket", Key="k")
    expect_error("NoSuchBucket", anon.list_objects_v2, Bucket="no-such-bucket")
    expect_error("AccessDenied", anon.get_object, Bucket=BUCKET, Key="no-such-key")
    expect_error("AccessDenied", anon.list_objects_v2, Bucket=BUCKET)
    expect_error("AccessDenied", anon.put_object, Bucket=BUCKET, Key="anon.txt", Body=b"x")
    expect_error("AccessDenied", anon.delete_object, Bucket=BUCKET, Key="public.txt")
    expect_error("AccessDenied", anon.list_buckets)
    expect_error("AccessDenied", anon.create_bucket, Bucket="anonymous-bucket")
    expect_error("AccessDenied", anon.get_object_acl, Bucket=BUCKET, Key="public.txt")
    expect_error("AccessDenied", anon.put_object_acl, Bucket=BUCKET, Key="public.txt", ACL="private")
    check(readable(anon, BUCKET, "public.txt") == b"for everyone", "the refused writes changed public.txt")


def bucket_acls(s3, anon):
    """A canned ACL at CreateBucket and through PutBucketAcl: public-read lets anyone
    list (and a missing key is then NoSuchKey), public-read-write lets anyone write;
    GetBucketAcl answers the grants."""
    s3.create_bucket(Bucket="listable", ACL="public-read")
    check(groups(s3.get_bucket_acl(Bucket="listable"), "READ") == [ALL_USERS], "bucket public-read's grants")
    s3.put_object(Bucket="listable", Key="listed.txt", Body=b"x")
    keys = [o["Key"] for o in anon.list_objects_v2(Bucket="listable").get("Contents", [])]
    check(keys == ["listed.txt"], "anonymous listing: %r" % keys)
    expect_error("NoSuchKey", anon.get_object, Bucket="listable", Key="no-such-key")
    expect_error("AccessDenied", anon.get_object, Bucket="listable", Key="listed.txt")
    s3.put_bucket_acl(Bucket="listable", ACL="private")
    check(groups(s3.get_bucket_acl(Bucket="listable"), "READ") == [], "PutBucketAcl private not applied")
    expect_error("AccessDenied", anon.list_objects_v2, Bucket="listable")
    s3.put_bucket_acl(Bucket="listable", ACL="public-read-write")
    anon.put_object(Bucket="listable", Key="from-anyone.txt", Body=b"anyone")
    acl = s3.get_object_acl(Bucket="listable", Key="listed.txt")
    s3.put_bucket_acl(Bucket="listable", AccessControlPolicy={
        "Owner": acl["Owner"],
        "Grants": [{"Grantee": {"Type": "CanonicalUser", "ID": acl["Owner"]["ID"]}, "Permission": "FULL_CONTROL"}]})
    expect_error("AccessDenied", anon.put_object, Bucket="listable", Key="again.txt", Body=b"x")
    s3.put_bucket_acl(Bucket="listable", GrantRead='uri="%s"' % ALL_USERS)
    check(anon.list_objects_v2(Bucket="listable")["KeyCount"] == 2, "GrantRead on the bucket not applied")


def object_ownership(s3):
    """BucketOwnerEnforced: ACLs are disabled, as S3 answers (but bucket-owner-full-control
    and private, which say nothing more); reading them still works."""
    s3.create_bucket(Bucket="enforced", ObjectOwnership="BucketOwnerEnforced")
    expect_error("AccessControlListNotSupported", s3.put_object, Bucket="enforced", Key="k", Body=b"x",
                 ACL="public-read")
    expect_error("AccessControlListNotSupported", s3.put_object, Bucket="enforced", Key="k", Body=b"x",
                 ACL="bucket-owner-read")
    s3.put_object(Bucket="enforced", Key="k", Body=b"x", ACL="bucket-owner-full-control")
    s3.put_object(Bucket="enforced", Key="k", Body=b"x", ACL="private")
    expect_error("AccessControlListNotSupported", s3.put_object_acl, Bucket="enforced", Key="k", ACL="public-read")
    expect_error("AccessControlListNotSupported", s3.put_bucket_acl, Bucket="enforced", ACL="public-read")
    check(len(s3.get_object_acl(Bucket="enforced", Key="k")["Grants"]) == 1, "GetObjectAcl on an enforced bucket")
    check(len(s3.get_bucket_acl(Bucket="enforced")["Grants"]) == 1, "GetBucketAcl on an enforced bucket")
    expect_error("InvalidBucketAclWithObjectOwnership", s3.create_bucket, Bucket="enforced-public",
                 ObjectOwnership="BucketOwnerEnforced", ACL="public-read")
    s3.create_bucket(Bucket="preferred", ObjectOwnership="BucketOwnerPreferred", ACL="public-read")
    s3.put_object(Bucket="preferred", Key="k", Body=b"x", ACL="public-read")


def form_acl(s3, anon):
    """A browser form's acl field sets the object's canned ACL, as S3 takes it."""
    post = s3.generate_presigned_post(BUCKET, "form.txt", Fields={"acl": "public-read"},
                                      Conditions=[{"acl": "public-read"}], ExpiresIn=300)
    status, body = post_form(post["url"], post["fields"], b"from a form")
    check(status == 204, "form: %d %r" % (status, body[:300]))
    check(readable(anon, BUCKET, "form.txt") == b"from a form", "the form's acl not applied")


def main(endpoint):
    s3 = s3_client(endpoint, {"max_attempts": 1})
    anon = anonymous_client(endpoint)
    s3.create_bucket(Bucket=BUCKET)
    for name, fn, args in (("object_acls", object_acls, (s3, anon)),
                           ("object_grants", object_grants, (s3, anon)),
                           ("anonymous_codes", anonymous_codes, (s3, anon)),
                           ("bucket_acls", bucket_acls, (s3, anon)),
                           ("object_ownership", object_ownership, (s3,)),
                           ("form_acl", form_acl, (s3, anon))):
        run(name, fn, *args)
    if failures:
        sys.exit("FAIL: " + ", ".join(failures))


if __name__ == "__main__":
    main(sys.argv[1])
