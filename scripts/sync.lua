-- `cloudlua sync` (lua/commands.lua) for the command lines that name this script:
-- makes DST the same as SRC, a local folder and a bucket location or two bucket
-- locations. `cloudlua sync --help` describes every option; docs/cli.md the command.
--
--   cloudlua scripts/sync.lua ./build s3://site/www --delete --exclude '*.tmp'
os.exit(cloud.commands.main("sync", ...), true)
