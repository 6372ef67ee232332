// `npm run demo`: run the orchestrator in a sandbox (an env built from
// nothing, its own HOME) against a mocked `git` and a mocked `deploy`, then
// print what the mocks recorded.
import { fileURLToPath } from 'node:url';
import { createMockBinDir, createSandbox, run } from 'shimkit';

const orchestrator = fileURLToPath(new URL('./orchestrator.mjs', import.meta.url));
const sb = createSandbox();
const bin = createMockBinDir();
sb.use(bin); // the mocks go first on the sandbox PATH
try {
  const git = bin.mock('git');
  git.enqueue([{ stdout: 'release/2.4\n' }, { stdout: '' }]);

  // Three parallel calls, three responses: each is served exactly once, to
  // whichever call claims it first.
  const deploy = bin.mock('deploy', { onExhausted: 'fail' });
  deploy.enqueue([
    { stdout: 'deployed as d-101\n', delayMs: 120 },
    { stdout: 'deployed as d-102\n', delayMs: 40 },
    { stderr: 'quota exceeded\n', exitCode: 3 },
  ]);

  console.log('$ orchestrator   (in a sandbox; git and deploy are mocks on its PATH)\n');
  const r = await run(process.execPath, [orchestrator], { sandbox: sb, timeoutMs: 30_000 });
  process.stdout.write(r.stdout);
  process.stderr.write(r.stderr);
  console.log(`\norchestrator exited with ${r.exitCode} after ${r.durationMs} ms\n`);

  for (const mock of [git, deploy]) {
    console.log(`mock "${mock.name}" recorded ${mock.callCount()} calls:`);
    for (const call of mock.calls()) {
      const took = call.endedAt - call.startedAt;
      console.log(
        `  #${call.index} ${mock.name} ${call.argv.join(' ')}  → response #${call.response}, exit ${call.exitCode}, ${took} ms`,
      );
    }
    mock.assertDone(); // throws, listing what was never used, if a response was left over
  }
  console.log('\nevery scripted response was used exactly once.');
} finally {
  await bin.dispose(); // the temp dir with the shims and their state is gone
  await sb.dispose(); // and so is the sandbox, with anything still running in it
}
