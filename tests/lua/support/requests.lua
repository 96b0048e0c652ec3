-- The embedded emulator's requests counted between two points of a test file:
--
--   local requests = dofile("tests/lua/support/requests.lua")
--   requests.mark()
--   ... s3.sync{ ... } ...
--   expect(requests.since()).to_equal{ ListObjectsV2 = 2 }   -- operation -> requests since the mark
local M = {}
local marked = {}

-- Remembers the counts as they are now.
function M.mark() marked = cloud.emulator.requests() end

-- The requests of each operation asked since the last mark (operations asked none left out).
function M.since()
  local out = {}
  for op, n in pairs(cloud.emulator.requests()) do
    if n > (marked[op] or 0) then out[op] = n - (marked[op] or 0) end
  end
  return out
end

return M
