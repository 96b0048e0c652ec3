-- Benchmark, run by hand (not by ctest): a multipart upload of 10,000 one-byte-ish
-- parts against the embedded emulator, then the completion that lists all of them.
-- Prints the time the part uploads took and, for the completion, the wall time of the
-- whole call (validate, serialise the 10,000-part XML, sign, send, the emulator's
-- checks, parse) as meta.elapsed reports it, over several rounds.
--
--   build/cloudlua tests/bench/complete_10000.lua [parts] [rounds]
--
-- Needs the embedded emulator (nothing configured), whose minimum part size it lowers.

local parts_wanted = tonumber(arg[1]) or 10000
local rounds = tonumber(arg[2]) or 3
assert(cloud.emulator, "run with nothing configured: the benchmark drives the embedded emulator")
cloud.emulator.configure{ min_part_size = 1 }
local s3 = cloud.client{ max_attempts = 1 }.storage
s3.create_bucket{ Bucket = "bench" }

local function median(xs)
  table.sort(xs)
  return xs[(#xs + 1) // 2]
end

local complete_times = {}
for round = 1, rounds do
  local key = "bench/object-" .. round
  local up = s3.create_multipart_upload{ Bucket = "bench", Object = key }
  local listed, uploading = {}, 0
  for n = 1, parts_wanted do
    local r, meta = s3.upload_part{ Bucket = "bench", Object = key, uploadId = up.UploadId, partNumber = n,
                                    body = tostring(n) }
    listed[n] = { PartNumber = n, ETag = r.ETag }
    uploading = uploading + meta.elapsed
  end
  local done, meta = s3.complete_multipart_upload{ Bucket = "bench", Object = key, uploadId = up.UploadId, Part = listed }
  assert(done.ETag:match("%-" .. parts_wanted .. '"$'), "completed: " .. done.ETag)
  complete_times[round] = meta.elapsed
  print(("round %d: %d part uploads %.2f s (%.3f ms each), completion %.3f s"):format(
    round, parts_wanted, uploading, uploading / parts_wanted * 1000, meta.elapsed))
end

print(("median of %d rounds: completion of %d parts %.3f s"):format(rounds, parts_wanted, median(complete_times)))
