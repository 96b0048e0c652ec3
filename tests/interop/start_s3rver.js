// Starts s3rver (installed in ./node_modules by setup.sh) on 127.0.0.1 at a free port,
// storing into the folder given as the first argument, and prints one line,
// "s3rver http://127.0.0.1:<port>", once it listens. It stops on SIGTERM or SIGINT,
// or when its standard input closes, so that it never outlives the test that started it.
'use strict';

const S3rver = require('s3rver');

const directory = process.argv[2];
if (!directory) {
  console.error('usage: node start_s3rver.js DIRECTORY');
  process.exit(2);
}

const server = new S3rver({ address: '127.0.0.1', port: 0, directory, silent: true, vhostBuckets: false });

async function main() {
  const { address, port } = await server.run();
  process.stdout.write(`s3rver http://${address}:${port}\n`);
  const stop = () => server.close().finally(() => process.exit(0));
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  process.stdin.on('end', stop).on('error', stop).resume();
}

main().catch((err) => {
  console.error(`s3rver failed to start: ${err.message}`);
  process.exit(1);
});
