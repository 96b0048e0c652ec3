// Who may do what to a bucket or an object of the storage API, as S3's access control
// lists say: the requester's account (Worlds::caller of the access key it signed with,
// emulator/worlds.h; kAnonymous when unsigned), the owner of each bucket and object, the grants on them (canned ACLs,
// x-amz-grant-* headers, AccessControlPolicy bodies) and the bucket's Object Ownership.
// Decisions: an owner may do anything to what it owns (an account acts as its root
// user, with no IAM policy to narrow it); a bucket's owner is not, by that alone, let
// read another account's object in it (S3's ACL rule); a grant names a canonical
// user (64 hex digits) or the AllUsers or AuthenticatedUsers group; grants by e-mail
// are refused as S3 refuses them outside the regions that took them
// (UnresolvableGrantByEmailAddress). The storage service asks here once per request
// (storage.cpp, its handler table), never in its handlers.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "emulator/service.h"

namespace cloud {
namespace access {

// An account's canonical user id (64 hex digits), the form ACLs name it in, and its
// Owner element { ID, DisplayName }.
std::string canonical_id(const std::string& account);
json owner_of(const std::string& account);

// What a grant allows, in S3's words.
enum class Permission { read, write, read_acp, write_acp };

// Who owns a resource and the grants on it: null grants are the canned private (the
// owner's FULL_CONTROL alone), which most resources have and which costs nothing.
struct Acl {
  std::string owner = kBuiltInAccountId;  // an account, or kAnonymous
  json grants;                            // null, or Grant documents as GetObjectAcl answers them
};

// Whether `requester` may do what `permission` says to a resource with `acl`.
bool allowed(const std::string& requester, const Acl& acl, Permission permission);

// The AccessControlPolicy of `acl`: { Owner, AccessControlList }.
json policy_of(const Acl& acl);

// How a bucket's objects are owned (its x-amz-object-ownership).
inline constexpr const char* kObjectWriter = "ObjectWriter";
inline constexpr const char* kBucketOwnerPreferred = "BucketOwnerPreferred";
inline constexpr const char* kBucketOwnerEnforced = "BucketOwnerEnforced";
// serve's default; S3's is BucketOwnerEnforced (docs/emulator.md says why).
inline constexpr const char* kDefaultOwnership = kObjectWriter;

// The ACL a request sets on what it writes (PutObject, CopyObject,
// CreateMultipartUpload, CreateBucket) or on what exists (Put*Acl): from its canned
// ACL, its Grant* headers or its AccessControlPolicy; `acl.owner` is the resource's
// owner, `bucket_owner` the owner of the bucket it is in (the bucket-owner-* ACLs) and
// `ownership` that bucket's Object Ownership; `accounts` those of the world, the only
// ones a grant may name. `acl.grants` is left as it is when the request gives none and
// `required` is false (a write keeps private). A refusal names what was wrong, in S3's
// codes.
std::optional<HandlerResult> take_acl(const json& input, Acl& acl, const std::string& bucket_owner,
                                      const std::string& ownership, const std::vector<std::string>& accounts,
                                      bool required);

// The owner of an object `requester` writes to a bucket of `bucket_owner` and
// `ownership` with `input`'s canned ACL.
std::string object_owner(const std::string& requester, const json& input, const std::string& bucket_owner,
                         const std::string& ownership);

// Whether the operation's rule lets `requester` call `operation` on the bucket
// (`bucket`: null for ListBuckets and a new bucket's CreateBucket) and, for an
// object's operation, the object (`object`: null when the key holds none):
// AccessDenied (403) when it does not. A missing object is the handler's NoSuchKey
// only for a requester who may list the bucket, as S3 answers.
std::optional<HandlerResult> check(const std::string& operation, const std::string& requester, const Acl* bucket,
                                   const Acl* object);

// 403 AccessDenied, as S3 words it.
HandlerResult access_denied();

}  // namespace access
}  // namespace cloud
