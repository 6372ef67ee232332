'use strict';
// Shared by the Windows lane's test files (run by node.exe under Wine; see
// scripts/windows/lane.sh). Plain CommonJS against the built package.
const { mkdtempSync, rmSync } = require('node:fs');
const { tmpdir } = require('node:os');
const { join } = require('node:path');

const shimkit = require('../../dist/index.cjs');
const crossSpawn = require('cross-spawn');

/**
 * Arguments cmd.exe and the MSVC runtime treat specially: quotes, carets,
 * percent and exclamation signs, redirections, backslashes before quotes and
 * at the end, empty strings, spaces, tabs, non-ASCII.
 */
const TRICKY_ARGS = [
  'd"&e',
  '"&calc&"',
  '%PATH%',
  'a"|b',
  'x"<y',
  'a"^b',
  '',
  '!x!',
  'a!b',
  'x y',
  'a  b',
  '\ttab',
  '^',
  '^^',
  '&',
  '|',
  '<',
  '>',
  '%',
  '%%',
  '%~dp0',
  '%1',
  '!',
  '"',
  '""',
  '(p)',
  'a,b;c=d',
  '*?',
  '[x]',
  '`t`',
  "'q'",
  'ü日本',
  'a\\b',
  'a\\\\"b',
  'x\\\\',
  'C:\\dir with space\\',
  '\\',
  'end\\"',
];

/**
 * The two cross-spawn 7 itself mangles (it doubles only one of the
 * backslashes before a quote or at the end): no shim can repair those, so
 * through cross-spawn the others are exact; run() and spawnProcess() are
 * exact for all.
 */
const CROSS_SPAWN_MANGLES = ['a\\\\"b', 'x\\\\'];
const CROSS_SPAWN_EXACT = TRICKY_ARGS.filter((a) => !CROSS_SPAWN_MANGLES.includes(a));

/** What each test owns (see `own`), disposed before its temp dirs go. */
const owned = new WeakMap();

/**
 * A temp dir of the test's own under `parent`, removed by `t.after`, after
 * what the test `own()`s is disposed: on Windows a dir cannot be removed
 * while a mock in it still watches or holds files there.
 */
function tempDir(t, prefix = 'shimkit-win-', parent = tmpdir()) {
  const dir = mkdtempSync(join(parent, prefix));
  t.after(async () => {
    for (const value of (owned.get(t) ?? []).splice(0).reverse()) await value.dispose();
    rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
  });
  return dir;
}

/** `value` (a mock, bin dir or sandbox), disposed when the test ends (Node 20 has no `await using`). */
function own(t, value) {
  if (!owned.has(t)) owned.set(t, []);
  owned.get(t).push(value);
  t.after(() => value.dispose()); // a second dispose does nothing
  return value;
}

/** Poll until `condition()` holds; throws after `ms`. */
async function until(condition, ms, what) {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Whether `pid` is alive. */
function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

module.exports = {
  shimkit,
  crossSpawn,
  TRICKY_ARGS,
  CROSS_SPAWN_EXACT,
  CROSS_SPAWN_MANGLES,
  tempDir,
  own,
  until,
  alive,
};
