// jest runs these files (VT-04) from test/jest/runs.test.ts, not on its own:
// the vitest suite starts jest in a child process and checks what it leaves.
module.exports = {
  rootDir: __dirname,
  testMatch: ['**/*.test.cjs', '**/*.test.mjs'],
  testEnvironment: 'node',
  transform: {},
};
