// shimkit/jest (VT-02): the shimkit matchers through jest's expect.extend,
// the node:test-style dispose in afterEach. Run by test/jest/runs.test.ts.
const { execFileSync } = require('node:child_process');
require('shimkit/jest'); // the package's own export, as a user's setup file would
const { any, createMockBinary } = require('shimkit');

let git;
beforeEach(() => {
  git = createMockBinary('git', { strict: true, responses: [{ match: { argsPrefix: ['push'] } }] });
});
afterEach(() => git.dispose());

test('toHaveBeenCalledWithArgs and toHaveConsumedAllResponses', () => {
  execFileSync('git', ['push', 'origin', 'main'], { env: git.env() });
  expect(git).toHaveBeenCalledWithArgs(['push', 'origin', any()]);
  expect(git).not.toHaveBeenCalledWithArgs(['pull']);
  expect(git).toHaveConsumedAllResponses();
  expect(() => expect(git).toHaveBeenCalledWithArgs(['push', 'upstream', 'main'])).toThrow(
    'the last call differs at arg 2: expected "upstream", got "origin"',
  );
});
