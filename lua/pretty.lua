-- cloud.pretty: Lua values as readable text, for the REPL and for scripts.
-- Tables are nested and indented with their keys sorted (the array part first, in
-- order, then numbers, strings, booleans and the rest); a table that fits in the
-- width stays on one line, and a long list of short values is packed into lines.
-- A table inside itself is marked <cycle: table: 0x...>. Depth, item and string
-- limits end in an ellipsis so that one large answer stays readable. cloud.null
-- prints as null; a value with __tostring (error objects, clients) prints as its
-- string. ANSI colour only when the caller asks (the REPL asks on a terminal
-- without NO_COLOR).

local M = {}


local palette = {
  string = "32", number = "33", boolean = "33", null = "35", ["nil"] = "35",
  ["function"] = "36", userdata = "36", thread = "36", table = "36", mark = "2",
}

local reserved = {}
for w in ([[and break do else elseif end false for function goto if in local nil not or
            repeat return then true until while]]):gmatch("%a+") do
  reserved[w] = true
end

-- The options given, checked against cloud.pretty's declaration (lua/reference.lua:
-- color, width, indent, max_depth, max_items, max_string), with its defaults behind them.
local function settings(opts)
  return select(2, require("cloud.check").arguments("cloud.pretty", nil, 3, nil, opts))
end

-- `text` coloured as `kind` when colours are on.
local function paint(st, kind, text)
  if not st.color then return text end
  return "\27[" .. palette[kind] .. "m" .. text .. "\27[0m"
end

-- Columns `s` takes on a terminal: escape sequences take none, UTF-8 counts per character.
local function width_of(s)
  s = s:gsub("\27%[[%d;]*m", "")
  return utf8.len(s) or #s
end

local function is_null(v)
  local cloud = package.loaded.cloud
  return type(cloud) == "table" and v == cloud.null and v ~= nil
end

-- tostring through __tostring, or nil when there is none; a failing __tostring is shown.
local function custom_string(v)
  local mt = getmetatable(v)
  if type(mt) ~= "table" or mt.__tostring == nil then return nil end
  local ok, s = pcall(tostring, v)
  return ok and s or ("<__tostring failed: " .. tostring(s) .. ">")
end

local escapes = { ["\n"] = "\\n", ["\t"] = "\\t", ['"'] = '\\"', ["\\"] = "\\\\" }

-- A string's bytes as a Lua literal shows them: quotes, backslashes, line feeds and
-- tabs escaped here, every other control character (C1 too) and byte of no UTF-8 by
-- cloud.printable, the one function text from outside reaches a terminal through.
local function escape(s)
  s = s:gsub('[\n\t"\\]', escapes)
  local cloud = package.loaded.cloud
  if type(cloud) == "table" and cloud.printable then return cloud.printable(s) end
  return (s:gsub("%c", function(c) return ("\\%03d"):format(c:byte()) end))
end

-- A quoted string, cut at max_string bytes (never inside a UTF-8 character).
local function quote(st, s)
  if #s <= st.max_string then return paint(st, "string", '"' .. escape(s) .. '"') end
  local cut = st.max_string
  while cut > 0 and (s:byte(cut + 1) or 0) & 0xC0 == 0x80 do cut = cut - 1 end
  return paint(st, "string", '"' .. escape(s:sub(1, cut)) .. '"') .. paint(st, "mark", ("... (%d bytes)"):format(#s))
end

-- Text of a value that is not a table (or a table with __tostring).
local function scalar(st, v)
  if type(v) == "string" then return quote(st, v) end
  if is_null(v) then return paint(st, "null", "null") end
  return custom_string(v) or paint(st, type(v), tostring(v))
end

local type_order = { number = 1, string = 2, boolean = 3 }

-- Numbers, then strings, then booleans (false first), then anything else by type
-- name and address: a total order, so the output is the same every time.
local function key_less(a, b)
  local ta, tb = type(a), type(b)
  local oa, ob = type_order[ta] or 4, type_order[tb] or 4
  if oa ~= ob then return oa < ob end
  if ta == "number" or ta == "string" then return a < b end
  if ta == "boolean" then return not a and b end
  if ta ~= tb then return ta < tb end
  return ("%p"):format(a) < ("%p"):format(b)
end

-- Length of the array part: 1..n all present.
local function array_length(t)
  local n = 0
  while rawget(t, n + 1) ~= nil do n = n + 1 end
  return n
end

-- The keys outside the array part, sorted.
local function other_keys(t, n)
  local keys = {}
  for k in next, t do
    if not (math.type(k) == "integer" and k >= 1 and k <= n) then keys[#keys + 1] = k end
  end
  table.sort(keys, key_less)
  return keys
end

local function key_text(st, k)
  if type(k) == "string" and k:match("^[%a_][%w_]*$") and not reserved[k] then return k end
  if type(k) == "string" then return "[" .. quote(st, k) .. "]" end
  return "[" .. scalar(st, k) .. "]"
end

local render

-- Packs short entries into lines of at most `room` columns.
local function packed_lines(entries, room)
  local lines, line = {}, nil
  for _, e in ipairs(entries) do
    if line and width_of(line) + 2 + width_of(e) <= room then
      line = line .. ", " .. e
    else
      if line then lines[#lines + 1] = line end
      line = e
    end
  end
  lines[#lines + 1] = line
  return lines
end

-- `{ a, b }` when it fits from `column`; a list of short values packed into lines;
-- otherwise one entry per line.
local function layout(st, entries, plain_list, level, column)
  if #entries == 0 then return "{}" end
  local joined = table.concat(entries, ", ")
  local comma = level > 0 and 1 or 0  -- a nested table is followed by a comma when its parent is split
  if not joined:find("\n") and column + width_of(joined) + 4 + comma <= st.width then return "{ " .. joined .. " }" end
  local pad, close = st.indent:rep(level + 1), st.indent:rep(level)
  local lines = entries
  if plain_list and #entries > 6 and not joined:find("\n") then
    lines = packed_lines(entries, math.max(st.width - #pad - 1, 20))  -- 1: the comma
  end
  return "{\n" .. pad .. table.concat(lines, ",\n" .. pad) .. ",\n" .. close .. "}"
end

-- Entries of table `t` as text, at most max_items of them.
local function entries_of(st, t, level)
  local n = array_length(t)
  local keys = other_keys(t, n)
  local entries, total = {}, n + #keys
  local shown = math.min(total, st.max_items)
  local inner = #st.indent * (level + 1)
  for i = 1, math.min(n, shown) do
    entries[i] = render(st, t[i], level + 1, inner)
  end
  for i = n + 1, shown do
    local k = keys[i - n]
    local prefix = key_text(st, k) .. " = "
    entries[i] = prefix .. render(st, rawget(t, k), level + 1, inner + width_of(prefix))
  end
  if total > shown then entries[#entries + 1] = paint(st, "mark", ("... (%d more)"):format(total - shown)) end
  local short = true
  for _, e in ipairs(entries) do short = short and width_of(e) <= 20 end
  return entries, #keys == 0 and short
end

local function render_table(st, t, level, column)
  if st.open[t] then return paint(st, "mark", ("<cycle: table: %p>"):format(t)) end
  if level >= st.max_depth then return paint(st, "mark", "{...}") end
  st.open[t] = true
  local entries, plain_list = entries_of(st, t, level)
  st.open[t] = nil
  return layout(st, entries, plain_list, level, column)
end

-- `v` as text starting at `column` of a line that is indented `level` times.
render = function(st, v, level, column)
  if type(v) == "table" and not custom_string(v) then return render_table(st, v, level, column) end
  return scalar(st, v)
end

-- cloud.pretty(value [, options]): the text of one value; strings are quoted.
function M.format(value, opts)
  local st = settings(opts)
  st.open = {}
  return render(st, value, 0, 0)
end

-- The REPL's way to show results, as `lua` prints them (tab-separated, strings as
-- they are) but with tables pretty-printed; a multi-line result puts each value on
-- its own line.
function M.results(opts, ...)
  local texts = table.pack(...)
  local multiline = false
  for i = 1, texts.n do
    local v = texts[i]
    texts[i] = type(v) == "string" and v or M.format(v, opts)
    multiline = multiline or (type(v) ~= "string" and texts[i]:find("\n") ~= nil)
  end
  return table.concat(texts, multiline and "\n" or "\t", 1, texts.n)
end

-- cloud.pretty.print(...): print's twin that pretty-prints tables.
function M.print(...)
  io.write(M.results(nil, ...), "\n")
end

return setmetatable(M, { __call = function(_, value, opts) return M.format(value, opts) end })
