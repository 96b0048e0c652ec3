// Who may do what to a bucket or an object (access.h): accounts, grants, canned ACLs,
// Object Ownership, and the one rule of each storage operation.
#include "emulator/access.h"

#include <map>
#include <variant>

#include "core/base/crypto.h"

namespace cloud {
namespace access {

namespace {

const char* const kAllUsers = "http://acs.amazonaws.com/groups/global/AllUsers";
const char* const kAuthenticatedUsers = "http://acs.amazonaws.com/groups/global/AuthenticatedUsers";
const char* const kLogDelivery = "http://acs.amazonaws.com/groups/s3/LogDelivery";
// S3's canonical id of the anonymous requester, as it names the owner of what one wrote.
const char* const kAnonymousId = "65a011a29cdf8ec533ec3d1ccaae921c";

// The name S3 gives a permission in a Grant.
const char* permission_name(Permission p) {
  switch (p) {
    case Permission::read: return "READ";
    case Permission::write: return "WRITE";
    case Permission::read_acp: return "READ_ACP";
    case Permission::write_acp: return "WRITE_ACP";
  }
  return "";
}

json user_grant(const std::string& account, const char* permission) {
  json grantee = owner_of(account);
  grantee["Type"] = "CanonicalUser";
  return {{"Grantee", std::move(grantee)}, {"Permission", permission}};
}

json group_grant(const char* uri, const char* permission) {
  return {{"Grantee", {{"Type", "Group"}, {"URI", uri}}}, {"Permission", permission}};
}

// The grants of a canned ACL; nullopt for private (and for the bucket-owner-* ACLs
// when the owner is the bucket's owner, which say nothing more).
std::optional<json> canned_grants(const std::string& canned, const std::string& owner,
                                  const std::string& bucket_owner) {
  json grants = json::array({user_grant(owner, "FULL_CONTROL")});
  if (canned == "public-read" || canned == "public-read-write") grants.push_back(group_grant(kAllUsers, "READ"));
  if (canned == "public-read-write") grants.push_back(group_grant(kAllUsers, "WRITE"));
  if (canned == "authenticated-read") grants.push_back(group_grant(kAuthenticatedUsers, "READ"));
  bool to_bucket_owner = bucket_owner != owner && canned.rfind("bucket-owner-", 0) == 0;
  if (to_bucket_owner)
    grants.push_back(user_grant(bucket_owner, canned == "bucket-owner-read" ? "READ" : "FULL_CONTROL"));
  if (grants.size() == 1) return std::nullopt;  // private, aws-exec-read (no EC2 here), bucket-owner-* of one's own
  return grants;
}

HandlerResult invalid_argument(const std::string& message, const std::string& name, const std::string& value) {
  return HandlerResult::failure(400, "InvalidArgument", message, {{"ArgumentName", name}, {"ArgumentValue", value}});
}

// A grantee as a Grant* header names it (id="...", uri="...", emailAddress="..."), as
// the Grantee document of a grant; else the refusal naming it.
std::variant<json, HandlerResult> header_grantee(const std::string& header, std::string item) {
  size_t eq = item.find('=');
  std::string kind = item.substr(0, eq == std::string::npos ? 0 : eq), value;
  if (eq != std::string::npos) value = item.substr(eq + 1);
  if (value.size() >= 2 && value.front() == '"' && value.back() == '"') value = value.substr(1, value.size() - 2);
  if (kind == "id") return json{{"Type", "CanonicalUser"}, {"ID", value}};
  if (kind == "uri") return json{{"Type", "Group"}, {"URI", value}};
  if (kind == "emailAddress") return json{{"Type", "AmazonCustomerByEmail"}, {"EmailAddress", value}};
  return invalid_argument("Argument format not recognized", header, item);
}

// Whether `id` is the canonical user id of one of `accounts`.
bool names_account(const std::string& id, const std::vector<std::string>& accounts) {
  for (const std::string& account : accounts)
    if (canonical_id(account) == id) return true;
  return false;
}

// A Grantee a request names, checked as S3 checks it: the canonical id of an account
// of the world (`accounts`; any other is "Invalid id", as S3 answers an id it does not
// know) or one of S3's groups; an e-mail address is not taken here.
std::optional<HandlerResult> check_grantee(const json& grantee, const std::vector<std::string>& accounts) {
  std::string type = grantee.value("Type", "");
  if (type == "CanonicalUser" && !names_account(grantee.value("ID", ""), accounts))
    return invalid_argument("Invalid id", "CanonicalUser/ID", grantee.value("ID", ""));
  if (type == "Group") {
    std::string uri = grantee.value("URI", "");
    if (uri != kAllUsers && uri != kAuthenticatedUsers && uri != kLogDelivery)
      return invalid_argument("Invalid group uri", "Group/URI", uri);
  }
  if (type == "AmazonCustomerByEmail")
    return HandlerResult::failure(400, "UnresolvableGrantByEmailAddress",
                                  "The email address you provided does not match any account on record.",
                                  {{"EmailAddressProvided", grantee.value("EmailAddress", "")}});
  return std::nullopt;
}

// The Grant* headers a request gives, by member and permission.
const std::pair<const char*, const char*> kGrantHeaders[] = {{"GrantFullControl", "FULL_CONTROL"},
                                                             {"GrantRead", "READ"},
                                                             {"GrantReadACP", "READ_ACP"},
                                                             {"GrantWrite", "WRITE"},
                                                             {"GrantWriteACP", "WRITE_ACP"}};

// The grants of the request's Grant* headers (each a comma-separated list of grantees)
// appended to `grants`; a refusal when one is not a grantee.
std::optional<HandlerResult> header_grants(const json& input, json& grants) {
  for (const auto& [member, permission] : kGrantHeaders) {
    std::string list = input.value(member, "");
    for (size_t start = 0; start < list.size();) {
      size_t end = std::min(list.find(',', start), list.size());
      size_t first = list.find_first_not_of(" \t", start), last = list.find_last_not_of(" \t", end - 1);
      start = end + 1;
      if (first >= end || last == std::string::npos || last < first) continue;
      auto grantee = header_grantee(member, list.substr(first, last - first + 1));
      if (auto* refused = std::get_if<HandlerResult>(&grantee)) return *refused;
      grants.push_back({{"Grantee", std::get<json>(grantee)}, {"Permission", permission}});
    }
  }
  return std::nullopt;
}

// Whether `grants` give `grantee` the permission (FULL_CONTROL gives all of them).
bool grants_to(const json& grants, const std::string& requester, Permission p) {
  const std::string id = canonical_id(requester);
  for (const json& g : grants) {
    const json& grantee = g.at("Grantee");
    std::string permission = g.value("Permission", "");
    if (permission != "FULL_CONTROL" && permission != permission_name(p)) continue;
    std::string type = grantee.value("Type", ""), uri = grantee.value("URI", "");
    if (type == "CanonicalUser" && grantee.value("ID", "") == id && requester != kAnonymous) return true;
    if (type == "Group" && (uri == kAllUsers || (uri == kAuthenticatedUsers && requester != kAnonymous))) return true;
  }
  return false;
}

// Whether the grants are only the bucket owner's FULL_CONTROL (and the owner's own):
// what a bucket with ACLs disabled still takes.
bool only_owners_full_control(const json& grants, const std::string& owner, const std::string& bucket_owner) {
  for (const json& g : grants) {
    std::string id = g.at("Grantee").value("ID", "");
    if (g.value("Permission", "") != "FULL_CONTROL" || (id != canonical_id(owner) && id != canonical_id(bucket_owner)))
      return false;
  }
  return true;
}

// What each operation needs: to be signed, to own the bucket, or a permission on
// the bucket or on the object it names.
enum class Needs { signed_in, bucket_owner, bucket, object };
struct Rule {
  Needs needs;
  Permission permission;
};

// The rule of `operation`; one the table lacks is its bucket owner's alone.
Rule rule_of(const std::string& operation) {
  static const std::map<std::string, Rule> rules = {
      {"AbortMultipartUpload", {Needs::bucket, Permission::write}},
      {"CompleteMultipartUpload", {Needs::bucket, Permission::write}},
      {"CopyObject", {Needs::bucket, Permission::write}},  // and READ on the source (the handler's)
      {"CreateBucket", {Needs::signed_in, Permission::write}},
      {"CreateMultipartUpload", {Needs::bucket, Permission::write}},
      {"DeleteObject", {Needs::bucket, Permission::write}},
      {"DeleteObjects", {Needs::bucket, Permission::write}},
      {"GetBucketAcl", {Needs::bucket, Permission::read_acp}},
      {"GetObject", {Needs::object, Permission::read}},
      {"GetObjectAcl", {Needs::object, Permission::read_acp}},
      {"HeadBucket", {Needs::bucket, Permission::read}},
      {"HeadObject", {Needs::object, Permission::read}},
      {"ListBuckets", {Needs::signed_in, Permission::read}},
      {"ListMultipartUploads", {Needs::bucket, Permission::read}},
      {"ListObjects", {Needs::bucket, Permission::read}},
      {"ListObjectsV2", {Needs::bucket, Permission::read}},
      {"ListParts", {Needs::bucket, Permission::write}},
      {"PutBucketAcl", {Needs::bucket, Permission::write_acp}},
      {"PutObject", {Needs::bucket, Permission::write}},
      {"PutObjectAcl", {Needs::object, Permission::write_acp}},
      {"UploadPart", {Needs::bucket, Permission::write}},
      {"UploadPartCopy", {Needs::bucket, Permission::write}},  // and READ on the source (the handler's)
  };
  auto it = rules.find(operation);
  return it == rules.end() ? Rule{Needs::bucket_owner, Permission::write} : it->second;
}

}  // namespace

// The built-in account keeps the id every answer named before accounts were kept.
std::string canonical_id(const std::string& account) {
  if (account == kAnonymous) return kAnonymousId;
  if (account == kBuiltInAccountId) return sha256_hex("cloudlua-emulator");
  return sha256_hex("cloudlua-account:" + account);
}

json owner_of(const std::string& account) {
  std::string name = account == kBuiltInAccountId ? "cloudlua" : account == kAnonymous ? "anonymous" : account;
  return {{"ID", canonical_id(account)}, {"DisplayName", name}};
}

bool allowed(const std::string& requester, const Acl& acl, Permission permission) {
  if (requester == acl.owner && requester != kAnonymous) return true;
  return acl.grants.is_array() && grants_to(acl.grants, requester, permission);
}

json policy_of(const Acl& acl) {
  json grants = acl.grants.is_array() ? acl.grants : json::array({user_grant(acl.owner, "FULL_CONTROL")});
  return {{"Owner", owner_of(acl.owner)}, {"AccessControlList", std::move(grants)}};
}

// One way of saying the ACL at most (a canned ACL, Grant* headers, or the policy in
// full: InvalidRequest, as S3 answers); with BucketOwnerEnforced none but the bucket
// owner's FULL_CONTROL (AccessControlListNotSupported).
std::optional<HandlerResult> take_acl(const json& input, Acl& acl, const std::string& bucket_owner,
                                      const std::string& ownership, const std::vector<std::string>& accounts,
                                      bool required) {
  bool canned = input.contains("ACL"), full = input.contains("Owner") || input.contains("AccessControlList");
  json grants = json::array();
  if (auto refused = header_grants(input, grants)) return refused;
  bool headers = !grants.empty();
  if (canned && headers)
    return HandlerResult::failure(400, "InvalidRequest",
                                  "Specifying both Canned ACLs and Header Grants is not allowed");
  if (full && (canned || headers))
    return HandlerResult::failure(400, "UnexpectedContent", "This request does not support content");
  if (required && !canned && !headers && !full)
    return HandlerResult::failure(
        400, "MalformedACLError",
        "The XML you provided was not well-formed or did not validate against our published schema");
  if (!canned && !headers && !full) return std::nullopt;
  std::optional<json> taken;
  if (canned) taken = canned_grants(input.value("ACL", ""), acl.owner, bucket_owner);
  if (headers) taken = std::move(grants);
  if (full) {
    if (input.contains("Owner") && input["Owner"].value("ID", canonical_id(acl.owner)) != canonical_id(acl.owner))
      return HandlerResult::failure(403, "AccessDenied", "The Owner of an AccessControlPolicy must be its owner's");
    taken = input.value("AccessControlList", json::array());
  }
  for (const json& g : headers || full ? *taken : json::array())  // a canned ACL's name the owners
    if (auto refused = check_grantee(g.value("Grantee", json::object()), accounts)) return refused;
  std::string name = input.value("ACL", "private");
  bool plain = (name == "private" || name == "bucket-owner-full-control") &&
               (!taken || only_owners_full_control(*taken, acl.owner, bucket_owner));
  if (ownership == kBucketOwnerEnforced && !plain)
    return HandlerResult::failure(400, "AccessControlListNotSupported", "The bucket does not allow ACLs");
  if (ownership == kBucketOwnerEnforced) taken.reset();  // only the owner's, as ACLs disabled keep it
  acl.grants = taken ? std::move(*taken) : json();
  return std::nullopt;
}

std::string object_owner(const std::string& requester, const json& input, const std::string& bucket_owner,
                         const std::string& ownership) {
  if (ownership == kBucketOwnerEnforced) return bucket_owner;
  if (ownership == kBucketOwnerPreferred && input.value("ACL", "") == "bucket-owner-full-control") return bucket_owner;
  return requester;
}

std::optional<HandlerResult> check(const std::string& operation, const std::string& requester, const Acl* bucket,
                                   const Acl* object) {
  Rule rule = rule_of(operation);
  bool ok = requester != kAnonymous && rule.needs == Needs::signed_in;
  if (bucket && rule.needs == Needs::bucket_owner) ok = requester == bucket->owner && requester != kAnonymous;
  if (bucket && rule.needs == Needs::bucket) ok = allowed(requester, *bucket, rule.permission);
  if (bucket && rule.needs == Needs::object)
    ok = object ? allowed(requester, *object, rule.permission) : allowed(requester, *bucket, Permission::read);
  if (ok) return std::nullopt;
  return access_denied();
}

HandlerResult access_denied() { return HandlerResult::failure(403, "AccessDenied", "Access Denied"); }

}  // namespace access
}  // namespace cloud
