#!/usr/bin/env node
// The program under test: a tiny release orchestrator. It asks `git` which
// branch it is on and whether the tree is clean, then runs `deploy` for three
// regions in parallel and reports each result.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);

const branch = (await run('git', ['rev-parse', '--abbrev-ref', 'HEAD'])).stdout.trim();
const dirty = (await run('git', ['status', '--porcelain'])).stdout.trim();
if (dirty) {
  console.error(`refusing to deploy ${branch}: the working tree has changes`);
  process.exit(1);
}

const regions = ['eu-west', 'us-east', 'ap-south'];
const results = await Promise.allSettled(
  regions.map((region) => run('deploy', ['--region', region, '--ref', branch])),
);
let failed = 0;
results.forEach((result, i) => {
  if (result.status === 'fulfilled') {
    console.log(`${regions[i]}: ${result.value.stdout.trim()}`);
  } else {
    failed += 1;
    console.log(
      `${regions[i]}: FAILED (exit ${result.reason.code}) ${result.reason.stderr.trim()}`,
    );
  }
});
process.exit(failed ? 2 : 0);
