-- Restores a code-host server from a backup and waits until it is RUNNING.
--
--   cloudlua scripts/restore_instance.lua BACKUP_ID INSTANCE_ID [--type TYPE] [--disk GB]
--            [--zone ZONE] [--firewall-group NAME] [--description TEXT] [--no-wait]
--            [--timeout SECONDS] [--poll SECONDS]
--   cloudlua scripts/restore_instance.lua 0123456789abcdef0123456789abcdef code-1 --type e-large16
--
-- Prints the server's URL and global IP address once it runs. The restore is sent once
-- (the client never resends it after it may have arrived). The wait is the model's
-- InstanceRunning waiter (GetInstance every 30 s): on the embedded emulator it passes
-- its virtual time, against `cloudlua serve` or a real endpoint it polls.

local here = debug.getinfo(1, "S").source:match("^@(.*/)") or ""
package.path = here .. "?.lua;" .. package.path
local observe = require("lib.observe")
local lib_args = require("lib.args")
local args = lib_args.parse({
  usage = "cloudlua scripts/restore_instance.lua BACKUP_ID INSTANCE_ID [--type TYPE] [--disk GB] [--zone ZONE] " ..
          "[--firewall-group NAME] [--description TEXT] [--no-wait] [--timeout SECONDS] [--poll SECONDS]",
  about = "Restores the code-host server INSTANCE_ID from the backup BACKUP_ID and waits\n" ..
          "until it is RUNNING.",
  positional = { "backup", "instance" },
  options = {
    { "type", value = "TYPE", choices = lib_args.allowed("RestoreInstance", "instanceType"),
      doc = "Instance type (default e-large)" },
    { "disk", value = "GB", choices = lib_args.allowed("RestoreInstance", "diskSize"), doc = "Disk size in GB" },
    { "zone", value = "ZONE", choices = lib_args.allowed("RestoreInstance", "availabilityZone"),
      doc = "Availability zone" },
    { "firewall-group", value = "NAME", doc = "Firewall group of the server" },
    { "description", value = "TEXT", doc = "Description of the server" },
    { "no-wait", doc = "Send the restore, do not wait until the server is RUNNING" },
    { "timeout", value = "SECONDS", check = "seconds", doc = "Wait at most SECONDS (default 1800)" },
    observe.poll_option,
  },
}, ...)
if not args then return end

local r = cloud.devops.restore_instance{
  backupId = args.backup,
  instanceId = args.instance,
  instanceType = args.type,
  diskSize = args.disk,
  availabilityZone = args.zone,
  firewallGroupName = args.firewall_group,
  description = args.description,
}
local i = r.instance
print(("restoring %s (%s, %d GB, %s): %s"):format(i.instanceId, i.instanceType, i.diskSize, i.availabilityZone, i.status.name))
if args.no_wait then return end

local running = observe.wait("InstanceRunning", { InstanceId = args.instance }, args.timeout, args.poll).instance
print(("%s is RUNNING (status %d): %s, global IP %s"):format(
  running.instanceId, running.status.code, running.codehostUrl, running.publicIpAddress))
