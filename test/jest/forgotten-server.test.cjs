// A strict mock server a jest test forgets (HT-03, HT-06): created, never
// disposed, with an unused expectation. The test passes; the warning comes
// at the exit of the process that ran it. Run by test/jest/runs.test.ts.
const { createMockServer } = require('shimkit');

test('forgets a strict server', async () => {
  const api = await createMockServer({ strict: true });
  api.expect({ path: '/v1/never' }, { text: 'unused' }, { name: 'plan' });
});
