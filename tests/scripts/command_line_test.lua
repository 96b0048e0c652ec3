-- Every script in scripts/ run as its header says, as a separate process with its own
-- embedded emulator and the documented fixtures: exit status and output, --help, and
-- the progress line that appears on a terminal (through script(1)) and never in a pipe.
-- CLOUDLUA_TEST_BIN names the binary (set by ctest).

local bin = assert(os.getenv("CLOUDLUA_TEST_BIN"), "CLOUDLUA_TEST_BIN not set (ctest sets it)")

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
  expect(out).to_contain("upload tty.bin: 5.0 MiB of 5.0 MiB (100%), ")
  expect(out).to_contain("download tty.bin: 5.0 MiB of 5.0 MiB (100%), ")
  out = sh("script -qec " .. sh_quote(sh_quote(bin) .. " scripts/upgrade_mesh.lua rg-1 mesh-1 1.22.1") .. " /dev/null </dev/null")
  expect(out).to_contain("waiting for MeshClusterRunning: try 1 of 60, 0 s (configuring)")
end)

test("--help prints the usage and describes every option, status 0", function()
  local out, code = cloudlua("scripts/restore_cluster.lua --help")
  expect(code).to_equal(0)
  expect(out).to_contain("usage: cloudlua scripts/restore_cluster.lua SNAPSHOT CLUSTER [KEY=VALUE ...]")
  for _, option in ipairs{ "--help", "--description TEXT", "--location ZONE", "--no-wait", "--timeout SECONDS" } do
    expect(out).to_match("\n  %-?%-?[%w, -]*" .. option:gsub("%-", "%%-") .. " +%u")
  end
  expect((cloudlua("scripts/restore_instance.lua --help")))
    .to_contain("--disk GB                Disk size in GB; one of 100, 200, 300, 400\n")
end)

-- Runs a script that must refuse its command line: status 2, nothing on stdout, the
-- reason first on stderr, then the usage, no traceback; returns the first line.
local function usage_error(args)
  local err_file = os.tmpname()
  local p = assert(io.popen("CLOUDLUA_QUIET_EMULATOR=1 " .. sh_quote(bin) .. " " .. args .. " 2>" .. err_file))
  local out = p:read("a")
  local _, _, code = p:close()
  local f = assert(io.open(err_file))
  local err = f:read("a")
  f:close()
  os.remove(err_file)
  expect(code).to_equal(2)
  expect(out).to_equal("")
  expect(err).to_match("\nusage: cloudlua scripts/[%w_]+%.lua .*\nRun 'cloudlua scripts/[%w_]+%.lua %-%-help' for every option%.\n$")
  expect(err:find("traceback", 1, true)).to_be_nil()
  return err:match("^[^\n]*")
end

test("a usage error: the reason and the usage on stderr, status 2, no traceback", function()
  expect(usage_error("scripts/upgrade_mesh.lua rg-1")).to_equal("upgrade_mesh.lua: missing CLUSTER")
  expect(usage_error("scripts/open_firewall.lua fw-1 10.0.0.0/8 extra")).to_equal("open_firewall.lua: unexpected argument 'extra'")
  expect(usage_error("scripts/open_firewall.lua fw-1 10.0.0.0/8 --no-wait=yes"))
    .to_equal("open_firewall.lua: --no-wait takes no value")
  expect(usage_error("scripts/open_firewall.lua fw-1 10.0.0.0/8 --timeout"))
    .to_equal("open_firewall.lua: --timeout needs a value (SECONDS)")
end)

test("an unknown option suggests the nearest one", function()
  expect(usage_error("scripts/open_firewall.lua fw-1 10.0.0.0/8 --nowait"))
    .to_equal("open_firewall.lua: unknown option '--nowait'; did you mean '--no-wait'?")
  expect(usage_error("scripts/restore_cluster.lua snap-1 c-1 --descripton=x"))
    .to_equal("restore_cluster.lua: unknown option '--descripton'; did you mean '--description'?")
  expect(usage_error("scripts/upgrade_mesh.lua rg-1 mesh-1 -x")).to_equal("upgrade_mesh.lua: unknown option '-x'")
end)

test("option values are checked: named with the value, the nearest allowed one suggested", function()
  expect(usage_error("scripts/open_firewall.lua fw-1 10.0.0.0/8 --timeout abc"))
    .to_equal("open_firewall.lua: --timeout abc: a number of seconds expected")
  -- --poll 0 would poll without pause; it was let through to cloud.wait_for's argument error.
  for _, script in ipairs{ "open_firewall.lua fw-1 10.0.0.0/8", "restore_cluster.lua snap-1 c-1" } do
    expect(usage_error("scripts/" .. script .. " --poll 0"))
      .to_equal(script:match("^%S+") .. ": --poll 0: a number of seconds above 0 expected")
  end
  expect(usage_error("scripts/restore_instance.lua 0123456789abcdef0123456789abcdef code-1 --disk big"))
    .to_equal("restore_instance.lua: --disk big: must be one of 100, 200, 300, 400")
  local line = usage_error("scripts/restore_instance.lua 0123456789abcdef0123456789abcdef code-1 --type=e-larg")
  expect(line).to_match("^restore_instance%.lua: %-%-type e%-larg: must be one of c%-large, .*; did you mean 'e%-large'%?$")
  expect(usage_error("scripts/multipart_upload.lua f b --part-size lots"))
    .to_equal("multipart_upload.lua: --part-size lots: a size such as 8M or 5242880 expected")
end)
