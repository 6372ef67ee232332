import { main } from './main.js';

// `shimkit calls D | head -1`: the reader went away. Stop quietly, as `cat` does (no stack trace).
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code === 'EPIPE') process.exit(0);
  throw error;
});

// The `shimkit` executable (dist/cli.js, with a `#!/usr/bin/env node` banner).
// process.exitCode, not process.exit(): output to a pipe is flushed first.
process.exitCode = await main(process.argv.slice(2));
