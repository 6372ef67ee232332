import { writeFileSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { join } from 'node:path';
import {
  createFrameProxy,
  createMockBinDir,
  createSandbox,
  encodeFrame,
  run,
  UnusedResponsesError,
} from 'shimkit';
import { parseArgs, positionals } from './args.js';
import type { Command } from './command.js';
import { ExitCode } from './exit-codes.js';
import { commandModule } from './run.js';

/** `shimkit demo`: both halves of shimkit on embedded defaults. */
export const demoCommand: Command = {
  name: 'demo',
  usage: 'shimkit demo',
  help: `Run an end-to-end example on built-in defaults, in temp dirs it removes after:
  1. a small release orchestrator (a Node script) runs in a sandbox against a mocked
     \`git\` and a mocked \`deploy\` called three times in parallel, each scripted
     response served exactly once; the recorded calls are printed and verified;
  2. a client sends three frames through a frame proxy that drops the 2nd; the
     server echoes what reaches it, and the proxy's counters are printed.
Exits 0 when everything went as scripted, 1 if not.

Example:
  shimkit demo`,
  async run(argv) {
    positionals('demo', parseArgs('demo', argv, {}), []);
    const mocked = await mockDemo();
    const proxied = await proxyDemo();
    process.stdout.write(
      mocked && proxied
        ? '\ndemo: ok — every scripted response was used once, and the proxy dropped frame 2.\n'
        : '\ndemo: FAILED — see above.\n',
    );
    return mocked && proxied ? ExitCode.ok : ExitCode.failed;
  },
};

/** The program under test: asks git for the branch and state, then deploys three regions at once. */
const ORCHESTRATOR = `import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
const run = promisify(execFile);
const branch = (await run('git', ['rev-parse', '--abbrev-ref', 'HEAD'])).stdout.trim();
const dirty = (await run('git', ['status', '--porcelain'])).stdout.trim();
if (dirty) { console.error('refusing to deploy ' + branch + ': the tree has changes'); process.exit(1); }
const regions = ['eu-west', 'us-east', 'ap-south'];
const results = await Promise.allSettled(regions.map((r) => run('deploy', ['--region', r, '--ref', branch])));
let failed = 0;
results.forEach((r, i) => {
  if (r.status === 'fulfilled') console.log(regions[i] + ': ' + r.value.stdout.trim());
  else { failed += 1; console.log(regions[i] + ': FAILED (exit ' + r.reason.code + ') ' + r.reason.stderr.trim()); }
});
process.exit(failed ? 2 : 0);
`;

async function mockDemo(): Promise<boolean> {
  const out = (line = '') => process.stdout.write(`${line}\n`);
  await using sb = createSandbox();
  await using bin = createMockBinDir();
  sb.use(bin);
  const git = bin.mock('git');
  git.enqueue([{ stdout: 'release/2.4\n' }, { stdout: '' }]);
  const deploy = bin.mock('deploy', { onExhausted: 'fail' });
  deploy.enqueue([
    { stdout: 'deployed as d-101\n', delayMs: 120 },
    { stdout: 'deployed as d-102\n', delayMs: 40 },
    { stderr: 'quota exceeded\n', exitCode: 3 },
  ]);
  const script = join(sb.workspace, 'orchestrator.mjs');
  writeFileSync(script, ORCHESTRATOR, { mode: 0o600 });
  out('1. mock binaries: $ node orchestrator.mjs   (in a sandbox; git and deploy are mocks)\n');
  const r = await run(process.execPath, [script], { sandbox: sb, timeoutMs: 30_000 });
  process.stdout.write(r.stdout);
  process.stdout.write(r.stderr);
  out(
    `\norchestrator exited with ${r.exitCode} after ${r.durationMs} ms (2: one deploy failed, as scripted)\n`,
  );
  let ok = r.exitCode === 2;
  for (const mock of [git, deploy]) {
    out(`mock "${mock.name}" recorded ${mock.callCount()} calls:`);
    for (const call of mock.calls()) {
      out(
        `  #${call.index} ${mock.name} ${call.argv.join(' ')}  -> response #${call.response}, exit ${call.exitCode}`,
      );
    }
    try {
      mock.assertDone();
    } catch (error) {
      if (!(error instanceof UnusedResponsesError)) throw error;
      out(error.message);
      ok = false;
    }
  }
  return ok;
}

async function proxyDemo(): Promise<boolean> {
  const out = (line = '') => process.stdout.write(`${line}\n`);
  await using sb = createSandbox();
  const serverPath = join(sb.tmp, 'server.sock');
  const server = createServer((socket) => {
    socket.on('error', () => {}); // the proxy closing mid-echo resets it
    socket.pipe(socket); // echoes each frame back
  });
  await new Promise<void>((done) => server.listen(serverPath, done));
  try {
    await using proxy = await createFrameProxy({
      listen: join(sb.tmp, 'proxy.sock'),
      upstream: serverPath,
      faults: [{ action: 'drop', direction: 'c2s', frame: 2 }],
    });
    out('\n2. frame proxy: client -> proxy (drops c2s frame 2) -> echo server\n');
    proxy.on('fault', (f) => out(`  fault: ${f.action} ${f.direction} frame ${f.frame}`));
    const client = connect(proxy.address);
    client.on('error', () => {});
    client.resume();
    await new Promise<void>((done) => client.once('connect', done));
    for (const body of ['one', 'two', 'three']) client.write(encodeFrame(body));
    await proxy.waitForFrames('s2c', 2, { timeoutMs: 10_000 });
    client.end();
    const { c2s, s2c, faults } = proxy.stats();
    out(
      `  forwarded c2s ${c2s.frames} frames (${c2s.bytes} bytes), s2c ${s2c.frames} frames; faults ${JSON.stringify(faults)}`,
    );
    client.destroy();
    return c2s.frames === 2 && s2c.frames === 2 && faults.drop === 1;
  } finally {
    await new Promise<void>((done) => server.close(() => done()));
  }
}

export const { exec, help } = commandModule(demoCommand);
