// `npm run demo`: run the orchestrator against a mocked `git` and a mocked
// `deploy`, then print what the mocks recorded.
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { createMockBinDir } from 'shimkit';

const orchestrator = fileURLToPath(new URL('./orchestrator.mjs', import.meta.url));
const bin = createMockBinDir();
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

  console.log('$ orchestrator   (git and deploy are mocks on PATH)\n');
  const exitCode = await new Promise((resolve) => {
    const child = execFile(process.execPath, [orchestrator], { env: bin.env() }, (error) =>
      resolve(error ? error.code : 0),
    );
    child.stdout.pipe(process.stdout);
    child.stderr.pipe(process.stderr);
  });
  console.log(`\norchestrator exited with ${exitCode}\n`);

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
}
