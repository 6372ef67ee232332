import { main } from './main.js';

// The `shimkit` executable (dist/cli.js, with a `#!/usr/bin/env node` banner).
// process.exitCode, not process.exit(): output to a pipe is flushed first.
process.exitCode = await main(process.argv.slice(2));
