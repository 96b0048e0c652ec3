-- Authentication (spec: every request signed with an access key): each API refuses
-- a wrong secret and an unknown access key with its own code, and accepts both
-- signing dialects from the same credentials.
-- Run: cloudlua test tests/regression/authentication_test.lua

assert(cloud.emulator, "needs the embedded emulator")

-- One harmless call per API, through `client`.
local calls = {
  cluster = function(c) return c.cluster.update_snapshot{ SnapshotName = "snap-1" } end,
  devops = function(c) return c.devops.restore_instance{ backupId = ("f"):rep(32), instanceId = "auth-probe" } end,
  catalog = function(c) return c.catalog.upgrade_meshplatform_service_mesh_version{ ResourceGroupName = "rg-x", ClusterName = "m" } end,
  storage = function(c) return c.storage.create_bucket{ Bucket = "auth-probe" } end,
}

test("a wrong secret is refused with 403 SignatureDoesNotMatch by every API", function()
  local client = cloud.client{ credentials = { secret_access_key = "not-the-secret" }, max_attempts = 1 }
  for _, call in pairs(calls) do
    local err = expect(call, client).to_fail{ kind = "api", code = "SignatureDoesNotMatch", status = 403 }
    expect(err.message).to_not_equal("")
    expect(tostring(err):find("not-the-secret", 1, true)).to_be_nil()  -- the secret is never shown
  end
end)

test("an unknown access key is refused with 403 InvalidAccessKeyId", function()
  local client = cloud.client{ credentials = { access_key_id = "NOSUCHKEY", secret_access_key = "x" }, max_attempts = 1 }
  for _, call in pairs(calls) do
    expect(call, client).to_fail{ kind = "api", code = "InvalidAccessKeyId", status = 403 }
  end
end)

test("the aws dialect is accepted with the same credentials", function()
  local aws = cloud.client{ dialect = "aws" }
  expect(aws.cluster.update_snapshot{ SnapshotName = "snap-1" }.snapshot.name).to_equal("snap-1")
  expect(select(2, aws.storage.create_bucket{ Bucket = "aws-dialect" }).status).to_equal(200)
end)
