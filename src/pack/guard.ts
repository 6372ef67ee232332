import { realpathSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Env } from '../internal/path-env.js';
import type { TestSandbox } from '../process/sandbox.js';

/**
 * Keeps the check project hermetic. Node looks for a bare specifier in the
 * `node_modules` of every parent dir, so a check project under a TMPDIR
 * inside a repo (or beside a stray `/tmp/node_modules`) would find a
 * devDependency the install never put there. A preload in every Node the
 * check starts (bins and loads, through NODE_OPTIONS) turns a bare
 * specifier that a file of the project resolves to a file outside the
 * project into the error Node gives for a package that is not installed:
 * `require()` through `Module._resolveFilename`, `import` through a
 * `module.register` resolve hook. NODE_PATH is unset.
 */

const PRELOAD = `'use strict';
const Module = require('node:module');
const { sep } = require('node:path');
const { pathToFileURL, fileURLToPath } = require('node:url');
const ROOT = __ROOT__;
const inside = (p) => typeof p === 'string' && (p === ROOT || p.startsWith(ROOT + sep));
const bare = (s) => typeof s === 'string' && !/^(?:[./]|[A-Za-z]:[\\\\/]|\\\\|file:|node:|data:)/.test(s) && !Module.isBuiltin(s);
const original = Module._resolveFilename;
Module._resolveFilename = function (request, parent, ...rest) {
  const found = original.call(this, request, parent, ...rest);
  const from = parent && parent.filename;
  if (bare(request) && (from == null || inside(from)) && typeof found === 'string' && !Module.isBuiltin(found) && !inside(found)) {
    const error = new Error("Cannot find module '" + request + "' (Node found it only outside the check project, at " + found + ')' + (from ? '\\nRequire stack:\\n- ' + from : ''));
    error.code = 'MODULE_NOT_FOUND';
    throw error;
  }
  return found;
};
if (typeof Module.register === 'function') {
  Module.register(__HOOKS__, { data: { root: ROOT } });
}
`;

const HOOKS = `import { sep } from 'node:path';
import { fileURLToPath } from 'node:url';
let root;
export function initialize(data) { root = data.root; }
const inside = (url) => { if (typeof url !== 'string' || !url.startsWith('file:')) return true; const p = fileURLToPath(url); return p === root || p.startsWith(root + sep); };
const bare = (s) => !/^(?:[./]|[A-Za-z]:[\\\\/]|\\\\|[A-Za-z][A-Za-z0-9+.-]*:)/.test(s);
export async function resolve(specifier, context, next) {
  const found = await next(specifier, context);
  if (bare(specifier) && (context.parentURL === undefined || inside(context.parentURL)) && !inside(found.url)) {
    const name = specifier.startsWith('@') ? specifier.split('/').slice(0, 2).join('/') : specifier.split('/')[0];
    const from = context.parentURL ? fileURLToPath(context.parentURL) : 'the check project';
    const error = new Error("Cannot find package '" + name + "' imported from " + from + ' (Node found it only outside the check project, at ' + fileURLToPath(found.url) + ')');
    error.code = 'ERR_MODULE_NOT_FOUND';
    throw error;
  }
  return found;
}
`;

/**
 * Write the preload and its hooks into `dir` (outside the project) and return
 * the env every Node of the check runs with.
 */
export function hermeticEnv(dir: string, projectDir: string, sandbox: TestSandbox): Env {
  const root = realpathSync(projectDir);
  const hooks = join(dir, 'shimkit-hermetic-hooks.mjs');
  const preload = join(dir, 'shimkit-hermetic.cjs');
  writeFileSync(hooks, HOOKS);
  writeFileSync(
    preload,
    PRELOAD.replace('__ROOT__', JSON.stringify(root)).replace(
      '__HOOKS__',
      JSON.stringify(pathToFileURL(hooks).href),
    ),
  );
  const before = sandbox.env().NODE_OPTIONS;
  return {
    NODE_PATH: undefined,
    NODE_OPTIONS: `${before ? `${before} ` : ''}--require ${JSON.stringify(preload)}`,
  };
}
