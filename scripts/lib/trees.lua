-- What scripts/sync.lua and scripts/check.lua share: the exit status of an error that
-- ended them, and one JSON line per record for --output json. (A location string is
-- read by cloud.storage.sync and check themselves: cloud.storage.location.)
local M = {}

-- The exit status of the error `err` that ended sync or check: 2 when the command as
-- typed is refused (a bad argument, a source that does not exist, an empty source
-- with --delete: kind "validation"), 1 for anything else.
function M.status_of(err)
  if type(err) == "table" then return err.kind == "validation" and 2 or 1 end
  return tostring(err):find("bad argument", 1, true) and 2 or 1
end

-- The text of `err` for a person: an error object's, or a message without the
-- "chunk:line:" where it was raised.
function M.message_of(err)
  if type(err) == "table" then return tostring(err) end
  return (tostring(err):gsub("^%[?[^:]*%]? ?[^:]*:%d+: ", ""))
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
-- numbers, booleans, lists of strings), in that order; a field whose value is nil is
-- left out.
function M.json_line(fields)
  local parts = {}
  for _, f in ipairs(fields) do
    local v = f[2]
    local text
    if v == nil then text = nil
    elseif type(v) == "string" then text = json_string(v)
    elseif type(v) == "table" then
      local items = {}
      for i, item in ipairs(v) do items[i] = json_string(tostring(item)) end
      text = "[" .. table.concat(items, ",") .. "]"
    elseif math.type(v) == "float" and v == math.floor(v) then text = ("%d"):format(v)
    else text = tostring(v) end
    if text then parts[#parts + 1] = json_string(f[1]) .. ":" .. text end
  end
  return "{" .. table.concat(parts, ",") .. "}"
end

return M
