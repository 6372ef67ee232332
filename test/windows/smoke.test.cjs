'use strict';
const test = require('node:test');
const assert = require('node:assert');
test('node.exe runs', () => {
  assert.strictEqual(process.platform, 'win32');
});
