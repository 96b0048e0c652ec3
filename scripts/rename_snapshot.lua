-- Renames a snapshot and moves its expiry.
--
--   cloudlua scripts/rename_snapshot.lua SNAPSHOT NEW_NAME [--expires TIME | --expires +DAYSd]
--   cloudlua scripts/rename_snapshot.lua snap-1 snap-audit --expires 2030-01-31T00:00:00Z
--   cloudlua scripts/rename_snapshot.lua snap-1 snap-audit --expires +90d     (90 days from now)
--
-- Prints the snapshot as the platform now has it. One UpdateSnapshot call; the name
-- and the time are checked against the spec's limits before anything is sent.

local here = debug.getinfo(1, "S").source:match("^@(.*/)") or ""
package.path = here .. "?.lua;" .. package.path
local usage = "cloudlua scripts/rename_snapshot.lua SNAPSHOT NEW_NAME [--expires TIME | --expires +DAYSd]"
local args = require("lib.args").parse({
  usage = usage,
  about = "Renames the snapshot SNAPSHOT to NEW_NAME and moves its expiry.",
  positional = { "snapshot", "name" },
  options = { { "expires", value = "TIME", doc = "New expiry: an ISO 8601 time, or +DAYSd (days from now)" } },
}, ...)
if not args then return end

-- "+90d" is 90 days from now (UTC); anything else is sent as given (ISO 8601).
local function expiry(text)
  if not text then return nil end
  local days = text:match("^%+(%d+)d$")
  if not days then return text end
  return os.date("!%Y-%m-%dT%H:%M:%SZ", os.time() + tonumber(days) * 86400)
end

local r = cloud.cluster.update_snapshot{
  SnapshotName = args.snapshot,
  snapshot = { name = args.name, expirationTime = expiry(args.expires) },
}
local s = r.snapshot
print(("snapshot %s is now %s, expires %s, status %s"):format(args.snapshot, s.name, s.expirationTime, s.status))
