-- `cloudlua check` (lua/commands.lua) for the command lines that name this script:
-- tells what differs between SRC and DST, transferring nothing (exit status 1 when
-- anything does). `cloudlua check --help` describes every option; docs/cli.md the command.
--
--   cloudlua scripts/check.lua ./build s3://site/www
os.exit(cloud.commands.main("check", ...), true)
