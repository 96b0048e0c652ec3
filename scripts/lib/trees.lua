-- What scripts/sync.lua and scripts/check.lua share: the way a command line names a
-- bucket location, and one JSON line per record for --output json.
--
-- A location is `s3://BUCKET/PREFIX` (as aws-cli writes it) or the same with
-- `cloud://`; anything else is a local folder (write ./s3:... for a folder whose name
-- starts so).
local M = {}

-- The location `text` names: { Bucket =, Prefix = } or the folder's path; nil and the
-- reason when a bucket location names no bucket.
function M.location(text)
  local scheme, rest = text:match("^(%w+)://(.*)$")
  if scheme ~= "s3" and scheme ~= "cloud" then return text end
  local bucket, prefix = rest:match("^([^/]*)/?(.*)$")
  if bucket == "" then return nil, "a bucket location names its bucket: " .. scheme .. "://BUCKET[/PREFIX]" end
  return { Bucket = bucket, Prefix = prefix ~= "" and prefix or nil }
end

-- `location` as the command line would name it again.
function M.shown(location)
  if type(location) == "string" then return location end
  return "s3://" .. location.Bucket .. "/" .. (location.Prefix or "")
end

-- A JSON string: UTF-8 text as it is, control characters and bytes that are not
-- UTF-8 escaped (\u00XX: a name's bytes still show).
local function json_string(s)
  local out = s:gsub('[%c"\\]', function(c)
    local short = { ['"'] = '\\"', ["\\"] = "\\\\", ["\n"] = "\\n", ["\r"] = "\\r", ["\t"] = "\\t" }
    return short[c] or ("\\u%04x"):format(c:byte())
  end)
  if utf8.len(out) then return '"' .. out .. '"' end
  local fixed, i = {}, 1
  while i <= #out do
    local ok, after = pcall(utf8.offset, out, 2, i)
    local code = ok and after and utf8.len(out:sub(i, after - 1)) and out:sub(i, after - 1)
    if code then fixed[#fixed + 1], i = code, after
    else fixed[#fixed + 1], i = ("\\u%04x"):format(out:byte(i)), i + 1 end
  end
  return '"' .. table.concat(fixed) .. '"'
end

-- One JSON object on one line from `fields`, a list of { name, value } (strings,
-- numbers, booleans, lists of strings), in that order.
function M.json_line(fields)
  local parts = {}
  for _, f in ipairs(fields) do
    local v = f[2]
    local text
    if type(v) == "string" then text = json_string(v)
    elseif type(v) == "table" then
      local items = {}
      for i, item in ipairs(v) do items[i] = json_string(tostring(item)) end
      text = "[" .. table.concat(items, ",") .. "]"
    elseif math.type(v) == "float" and v == math.floor(v) then text = ("%d"):format(v)
    else text = tostring(v) end
    parts[#parts + 1] = json_string(f[1]) .. ":" .. text
  end
  return "{" .. table.concat(parts, ",") .. "}"
end

return M
