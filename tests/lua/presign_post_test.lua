-- cloud.storage.presign_post against the embedded emulator: the form's shape (url and
-- fields, as boto3's generate_presigned_post answers), the policy it carries, the
-- arguments checked with lauxlib's wording, and the form posted by curl -F.
-- Run: cloudlua test tests/lua/presign_post_test.lua

local BUCKET = "post-bucket"

-- The policy document a form carries, decoded.
local function policy_of(form)
  local pipe = assert(io.popen("printf %s '" .. form.fields.policy .. "' | base64 -d"))
  local text = pipe:read("a")
  pipe:close()
  return text
end

setup(function()
  cloud.storage.create_bucket{ Bucket = BUCKET }
end)

test("the form has the bucket's url, the key, the signature fields and the policy", function()
  local form = cloud.storage.presign_post{ Bucket = BUCKET, Object = "up/${filename}", expires = 120,
                                           fields = { ["Content-Type"] = "text/plain" },
                                           conditions = { { "content-length-range", 1, 10 } } }
  expect(form.url:sub(-#BUCKET - 1)).to_equal("/" .. BUCKET)
  local names = {}
  for name in pairs(form.fields) do names[#names + 1] = name end
  table.sort(names)
  expect(names).to_equal{ "Content-Type", "key", "policy", "x-ext-algorithm", "x-ext-credential", "x-ext-date",
                          "x-ext-signature" }
  expect(form.fields.key).to_equal("up/${filename}")
  expect(form.fields["x-ext-algorithm"]).to_equal("EXT4-HMAC-SHA256")
  expect(form.fields["x-ext-signature"]:match("^%x+$") ~= nil and #form.fields["x-ext-signature"]).to_equal(64)
  local policy = policy_of(form)
  for _, part in ipairs{ '["content-length-range",1,10]', '{"Content-Type":"text/plain"}', '{"bucket":"' .. BUCKET .. '"}',
                         '["starts-with","$key","up/"]', '"expiration":' } do
    expect(policy:find(part, 1, true) ~= nil).to_equal(true)
  end
end)

test("the aws dialect's form has x-amz-* fields", function()
  local form = cloud.client{ dialect = "aws" }.storage.presign_post{ Bucket = BUCKET, Object = "k" }
  expect(form.fields["x-amz-algorithm"]).to_equal("AWS4-HMAC-SHA256")
  expect(policy_of(form):find('{"key":"k"}', 1, true) ~= nil).to_equal(true)
end)

test("bad arguments are refused with lauxlib's wording", function()
  local ok, e = pcall(cloud.storage.presign_post, { Bucket = BUCKET, Object = "k", expries = 60 })
  expect(ok).to_equal(false)
  expect(tostring(e):find("unknown field 'expries', did you mean 'expires'?", 1, true) ~= nil).to_equal(true)
  e = select(2, pcall(cloud.storage.presign_post, { Bucket = BUCKET, Object = "k", conditions = { { "matches", "$key", "x" } } }))
  expect(tostring(e):find("unknown operator 'matches'", 1, true) ~= nil).to_equal(true)
  e = select(2, pcall(cloud.storage.presign_post, { Bucket = BUCKET, Object = "k", expires = 0 }))
  expect(tostring(e):find("between 1 and 604800", 1, true) ~= nil).to_equal(true)
end)

test("curl -F posts the form; the embedded emulator stores the file", function()
  local form = cloud.storage.presign_post{ Bucket = BUCKET, Object = "posted.txt" }
  local file = os.tmpname()
  local f = assert(io.open(file, "wb"))
  f:write("posted bytes")
  f:close()
  local args = {}
  for name, value in pairs(form.fields) do args[#args + 1] = "--form-string '" .. name .. "=" .. value .. "'" end
  local pipe = assert(io.popen("curl -s -o /dev/null -w '%{http_code}' " .. table.concat(args, " ") ..
                               " -F 'file=@" .. file .. "' '" .. form.url .. "'"))
  local status = pipe:read("a")
  pipe:close()
  os.remove(file)
  expect(status).to_equal("204")
  expect(cloud.storage.get_object{ Bucket = BUCKET, Object = "posted.txt" }.Body).to_equal("posted bytes")
end)
