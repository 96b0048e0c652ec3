-- Every script in scripts/ run as its header says, as a separate process with its own
-- embedded emulator and the documented fixtures: exit status and output, --help, and
-- the progress line that appears on a terminal (through script(1)) and never in a pipe.
-- CLOUDLUA_TEST_BIN names the binary (set by ctest).

local bin = os.getenv("CLOUDLUA_TEST_BIN")

local function sh_quote(s) return "'" .. s:gsub("'", "'\\''") .. "'" end

-- Runs a shell command; returns its output (stdout and stderr) and exit code.
local function sh(command)
  local p = assert(io.popen(command .. " 2>&1"))
  local out = p:read("a")
  local _, _, code = p:close()
  return out, code
end

-- Without the line that says the embedded emulator serves: the scripts' own output.
local function cloudlua(args) return sh("CLOUDLUA_QUIET_EMULATOR=1 " .. sh_quote(bin) .. " " .. args) end

before_each(function()
  if not bin then skip("CLOUDLUA_TEST_BIN not set (ctest sets it)") end
end)

test("open_firewall.lua fw-1 203.0.113.0/24", function()
  local out, code = cloudlua("scripts/open_firewall.lua fw-1 203.0.113.0/24")
  expect(code).to_equal(0)
  expect(out).to_contain("opened TCP 443 from 203.0.113.0/24\nfirewall group fw-1 is APPLIED with 2 rules\n")
end)

test("restore_instance.lua BACKUP code-1 --type e-large16", function()
  local out, code = cloudlua("scripts/restore_instance.lua 0123456789abcdef0123456789abcdef code-1 --type e-large16")
  expect(code).to_equal(0)
  expect(out).to_match("code%-1 is RUNNING %(status 100%)")
end)

test("restore_cluster.lua snap-1 restored-1 env=qa owner=platform-team", function()
  local out, code = cloudlua("scripts/restore_cluster.lua snap-1 restored-1 env=qa owner=platform-team")
  expect(code).to_equal(0)
  expect(out).to_contain("restored-1 is RUNNING\n  pool-1")
end)

test("upgrade_mesh.lua rg-1 mesh-1 1.22.1", function()
  local out, code = cloudlua("scripts/upgrade_mesh.lua rg-1 mesh-1 1.22.1")
  expect(code).to_equal(0)
  expect(out).to_contain("mesh-1 is running with mesh 1.22.1")
end)

test("rename_snapshot.lua snap-1 snap-audit --expires 2030-01-31T00:00:00Z", function()
  local out, code = cloudlua("scripts/rename_snapshot.lua snap-1 snap-audit --expires 2030-01-31T00:00:00Z")
  expect(code).to_equal(0)
  expect(out).to_equal("snapshot snap-1 is now snap-audit, expires 2030-01-31T00:00:00Z, status AVAILABLE\n")
end)

test("multipart_upload.lua with a 5 MiB part and a small last one: no progress line in a pipe", function()
  local file = os.tmpname()
  local f = assert(io.open(file, "wb"))
  f:write(("0123456789abcdef"):rep(5 * 65536 + 64))  -- 5 MiB and 1 KiB: the platform's minimum, then a small last part
  f:close()
  local out, code = cloudlua(("scripts/multipart_upload.lua %s demo-bucket big.bin --part-size 5M"):format(sh_quote(file)))
  os.remove(file)
  expect(code).to_equal(0)
  expect(out).to_match('^uploaded .- to demo%-bucket/big%.bin: 5243904 bytes in 2 parts, ETag "%x+%-2", verified by download\n$')
end)

test("on a terminal the upload and the waits show a progress line", function()
  if not sh("command -v script"):find("script") then skip("script(1) not installed") end
  local file = os.tmpname()
  local f = assert(io.open(file, "wb"))
  f:write(("x"):rep(5 * 1024 * 1024 + 1024))
  f:close()
  local command = ("%s scripts/multipart_upload.lua %s demo-bucket tty.bin --part-size 5M"):format(sh_quote(bin), sh_quote(file))
  local out, code = sh("script -qec " .. sh_quote(command) .. " /dev/null </dev/null")
  os.remove(file)
  expect(code).to_equal(0)
  expect(out).to_contain("part 2 of 2, 5.0 of 5.0 MiB (100%)")
  out = sh("script -qec " .. sh_quote(sh_quote(bin) .. " scripts/upgrade_mesh.lua rg-1 mesh-1 1.22.1") .. " /dev/null </dev/null")
  expect(out).to_contain("waiting for cluster mesh-1 running: 0 s of 1800 s, try 1 (configuring)")
end)

test("--help prints the usage; a wrong call exits 1 with the usage", function()
  local out, code = cloudlua("scripts/restore_cluster.lua --help")
  expect(code).to_equal(0)
  expect(out).to_contain("usage: cloudlua scripts/restore_cluster.lua SNAPSHOT CLUSTER [KEY=VALUE ...]")
  out, code = cloudlua("scripts/upgrade_mesh.lua rg-1")
  expect(code).to_equal(1)
  expect(out).to_contain("missing CLUSTER\nusage: cloudlua scripts/upgrade_mesh.lua")
end)
