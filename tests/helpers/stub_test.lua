-- cloud.stub: the platform's answers queued by a test and checked against the model
-- (lua/stubber.lua). The cases that must fail are run from outside, by
-- tests/lua/test_runner_test.lua ("cloud.stub: ...").
-- Run: cloudlua test tests/helpers/stub_test.lua

test("a queued result answers the call, nothing is sent, and the client sends again once put away", function()
  local client = cloud.client{}
  local s = cloud.stub(client)
  s.storage.get_object:returns{ Body = "stubbed", ContentLength = 7 }
  local r, meta = client.storage.get_object{ Bucket = "nowhere", Object = "k" }
  expect(r).to_equal{ Body = "stubbed", ContentLength = 7 }
  expect(meta.stubbed).to_equal(true)
  s:assert_no_pending()
  s:deactivate()
  expect(client.storage.get_object, { Bucket = "nowhere", Object = "k" }).to_fail{ code = "NoSuchBucket" }
end)

test("answers come in the order queued; cloud.call takes them too", function()
  local s = cloud.stub()
  s.storage.head_object:returns{ ContentLength = 1 }
  s.storage.head_object:returns{ ContentLength = 2 }
  expect(cloud.storage.head_object{ Bucket = "b", Object = "k" }.ContentLength).to_equal(1)
  expect(cloud.call("HeadObject", { Bucket = "b", Object = "k" }).ContentLength).to_equal(2)
end)

test(":fails raises an api error of that code and status", function()
  local s = cloud.stub()
  s.storage.get_object:fails{ code = "NoSuchKey", status = 404, message = "The specified key does not exist." }
  local err = expect(cloud.storage.get_object, { Bucket = "b", Object = "k" })
                .to_fail{ kind = "api", code = "NoSuchKey", status = 404, operation = "GetObject" }
  expect(err.message).to_equal("The specified key does not exist.")
end)

test(":expects checks the arguments, before or after the answer, with cloud.ANY", function()
  local s = cloud.stub()
  s.storage.get_object:expects{ Bucket = "b", Object = cloud.ANY }:returns{ Body = "1" }
  s.storage.get_object:returns{ Body = "2" }:expects{ Bucket = "b", Object = "two", Range = cloud.ANY }
  expect(cloud.storage.get_object{ Bucket = "b", Object = "one" }.Body).to_equal("1")
  expect(cloud.storage.get_object{ Bucket = "b", Object = "two", Range = "bytes=0-1" }.Body).to_equal("2")
end)

test("a result the model's output shape does not allow is refused as it is queued, with its path", function()
  local s = cloud.stub()
  local err = expect_error(function() s.storage.list_objects_v2:returns{ Contents = { { Key = 1 } } } end,
                           { kind = "validation", code = "InvalidStubbedResult", field = "Contents[1].Key" })
  expect(err.fields[1].problem).to_equal("string expected, got integer")
  expect_error(function() s.storage.get_object:returns{ Nope = 1 } end, { field = "Nope", problem = "unknown field" })
end)

test("a stubber made in a case is put away at its end", function()
  cloud.storage.create_bucket{ Bucket = "sent-again" }
  expect(cloud.storage.head_bucket{ Bucket = "sent-again" }.BucketRegion).to_be_a("string")
end)
