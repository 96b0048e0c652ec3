-- Restores a code-host server from a backup and waits until it is RUNNING.
--
--   cloudlua scripts/restore_instance.lua BACKUP_ID INSTANCE_ID [--type TYPE] [--disk GB]
--            [--zone ZONE] [--firewall-group NAME] [--description TEXT] [--no-wait] [--timeout SECONDS]
--   cloudlua scripts/restore_instance.lua 0123456789abcdef0123456789abcdef code-1 --type e-large16
--
-- Prints the server's URL and global IP address once it runs. The restore is sent once
-- (the client never resends it after it may have arrived). The wait is the model's
-- InstanceRunning waiter (GetInstance every 30 s): on the embedded emulator it passes
-- its virtual time, against `cloudlua serve` or a real endpoint it polls.

local here = debug.getinfo(1, "S").source:match("^@(.*/)") or ""
package.path = here .. "?.lua;" .. package.path
local args = require("lib.args").parse({
  usage = "cloudlua scripts/restore_instance.lua BACKUP_ID INSTANCE_ID [--type TYPE] [--disk GB] [--zone ZONE] " ..
          "[--firewall-group NAME] [--description TEXT] [--no-wait] [--timeout SECONDS]",
  positional = { "backup", "instance" },
  options = { type = "value", disk = "value", zone = "value", ["firewall-group"] = "value", description = "value",
              ["no-wait"] = "flag", timeout = "value" },
}, ...)
if not args then return end
local observe = require("lib.observe")

local r = cloud.devops.restore_instance{
  backupId = args.backup,
  instanceId = args.instance,
  instanceType = args.type,
  diskSize = args.disk and math.tointeger(tonumber(args.disk)) or args.disk,
  availabilityZone = args.zone,
  firewallGroupName = args.firewall_group,
  description = args.description,
}
local i = r.instance
print(("restoring %s (%s, %d GB, %s): %s"):format(i.instanceId, i.instanceType, i.diskSize, i.availabilityZone, i.status.name))
if args.no_wait then return end

local running = observe.wait("InstanceRunning", { InstanceId = args.instance }, args.timeout).instance
print(("%s is RUNNING (status %d): %s, global IP %s"):format(
  running.instanceId, running.status.code, running.codehostUrl, running.publicIpAddress))
