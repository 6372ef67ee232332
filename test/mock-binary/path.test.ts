import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createMockBinary, createMockBinDir, DisposedError } from '../../src/index.js';
import {
  envWithPathEntry,
  pathDelimiter,
  pathKey,
  prependPathEntry,
  removePathEntry,
} from '../../src/internal/path-env.js';
import { runCommand } from '../helpers/index.js';

describe('install() and uninstall() on process.env.PATH', () => {
  let original: string | undefined;
  beforeEach(() => {
    original = process.env.PATH;
  });
  afterEach(() => {
    process.env.PATH = original;
  });

  it('MB-09 two mocks uninstalled in the order they were installed: PATH ends exactly as it started', async () => {
    const start = process.env.PATH;
    await using git = createMockBinary('git');
    await using docker = createMockBinary('docker');
    git.install();
    expect(process.env.PATH?.split(':')[0]).toBe(git.dir);
    docker.install();
    expect(process.env.PATH?.split(':').slice(0, 2)).toEqual([docker.dir, git.dir]);
    git.uninstall(); // not LIFO
    expect(process.env.PATH).toBe(`${docker.dir}:${start}`);
    docker.uninstall();
    expect(process.env.PATH).toBe(start);
  });

  it('MB-09 each installed mock is what a PATH lookup finds while it is installed', async () => {
    await using git = createMockBinary('git', { default: { stdout: 'mock git\n' } });
    await using docker = createMockBinary('docker', { default: { stdout: 'mock docker\n' } });
    git.install();
    docker.install();
    expect((await runCommand('git', ['--version'], { env: process.env })).stdout.toString()).toBe(
      'mock git\n',
    );
    expect((await runCommand('docker', ['ps'], { env: process.env })).stdout.toString()).toBe(
      'mock docker\n',
    );
    git.uninstall();
    const real = await runCommand('git', ['--version'], { env: process.env });
    expect(real.stdout.toString()).toMatch(/^git version /);
    expect((await runCommand('docker', ['ps'], { env: process.env })).stdout.toString()).toBe(
      'mock docker\n',
    );
    docker.uninstall();
  });

  it('MB-09 install() refuses a name another installed mock already provides, naming both and pointing at env()', async () => {
    await using first = createMockBinary('git');
    await using second = createMockBinary('git');
    await using bin = createMockBinDir();
    first.install();
    expect(() => second.install()).toThrow(
      `Cannot install mock "git" (${second.dir}): another installed mock already provides "git" (${first.dir}).`,
    );
    expect(() => second.install()).toThrow(
      /Pass each program under test its mock's env\(\) instead of install\(\)/,
    );
    bin.install();
    expect(() => bin.mock('git')).toThrow(/another installed mock already provides "git"/);
    first.uninstall();
    second.install(); // no longer shadowed
    expect(process.env.PATH?.split(':')[0]).toBe(second.dir);
    second.uninstall();
    bin.uninstall();
  });

  it('MB-09 any install/uninstall order restores PATH, and install() twice adds one entry', async () => {
    const start = process.env.PATH;
    const mocks = ['a', 'b', 'c', 'd'].map((n) => createMockBinary(n));
    try {
      for (const order of [
        [0, 1, 2, 3],
        [3, 1, 0, 2],
        [1, 3, 2, 0],
      ]) {
        for (const m of mocks) m.install().install();
        expect(process.env.PATH?.split(':').slice(0, 4)).toEqual(mocks.map((m) => m.dir).reverse());
        for (const i of order) mocks[i]?.uninstall();
        expect(process.env.PATH).toBe(start);
      }
    } finally {
      for (const m of mocks) await m.dispose();
    }
  });

  it('MB-09 dispose() uninstalls; a PATH that was unset is unset again', async () => {
    delete process.env.PATH;
    const git = createMockBinary('git');
    const bin = createMockBinDir();
    git.install();
    bin.install();
    expect(process.env.PATH).toBe(`${bin.dir}:${git.dir}`);
    await git.dispose();
    expect(process.env.PATH).toBe(bin.dir);
    await bin.dispose();
    expect('PATH' in process.env).toBe(false);
  });

  it('MB-09 env() after dispose() throws DisposedError instead of pointing PATH into a deleted dir', async () => {
    const git = createMockBinary('git');
    const bin = createMockBinDir();
    const docker = bin.mock('docker');
    await git.dispose();
    await docker.dispose();
    expect(() => git.env()).toThrow(DisposedError);
    expect(() => docker.env()).toThrow(/The mock binary "docker" was already disposed/);
    await bin.dispose();
    expect(() => bin.env()).toThrow(DisposedError);
    await using x = createMockBinary('x');
    // @ts-expect-error not an env
    expect(() => x.env('x')).toThrow(
      'Expected the env passed to env() to be an object such as process.env, got "x" (string).',
    );
  });

  it('MB-09 env() returns a copy with the dir first and never mutates the process', async () => {
    const before = { ...process.env };
    await using git = createMockBinary('git');
    const env = git.env();
    expect(env.PATH).toBe(`${git.dir}:${process.env.PATH}`);
    expect(process.env).toEqual(before);
    const base = { PATH: '/usr/bin', HOME: '/h' };
    expect(git.env(base)).toEqual({ PATH: `${git.dir}:/usr/bin`, HOME: '/h' });
    expect(base).toEqual({ PATH: '/usr/bin', HOME: '/h' });
    expect(git.env({}).PATH).toBe(git.dir);
  });

  it('MB-09 a bin dir with several mocks goes on PATH as one entry', async () => {
    await using bin = createMockBinDir();
    const git = bin.mock('git', { default: { stdout: 'g' } });
    const docker = bin.mock('docker', { default: { stdout: 'd' } });
    expect(git.dir).toBe(bin.dir);
    expect(docker.dir).toBe(bin.dir);
    const env = bin.env();
    expect((await runCommand('git', [], { env })).stdout.toString()).toBe('g');
    expect((await runCommand('docker', [], { env })).stdout.toString()).toBe('d');
    expect(bin.mocks()).toEqual([git, docker]);
  });
});

describe('PATH on Windows, tested with an injected platform and env', () => {
  it('MB-09 keeps the existing Path key casing and uses ";"', () => {
    const env = { Path: 'C:\\Windows;C:\\Tools', SystemRoot: 'C:\\Windows' };
    expect(pathKey(env, 'win32')).toBe('Path');
    expect(pathDelimiter('win32')).toBe(';');
    const next = envWithPathEntry(env, 'C:\\mock\\bin', 'win32');
    expect(next).toEqual({
      Path: 'C:\\mock\\bin;C:\\Windows;C:\\Tools',
      SystemRoot: 'C:\\Windows',
    });
    expect(Object.keys(next)).not.toContain('PATH');
    expect(env.Path).toBe('C:\\Windows;C:\\Tools');
  });

  it('MB-09 finds PATH under any casing, and uses "Path" for a fresh env', () => {
    expect(pathKey({ PATH: 'x' }, 'win32')).toBe('PATH');
    expect(pathKey({ pAtH: 'x' }, 'win32')).toBe('pAtH');
    expect(pathKey({}, 'win32')).toBe('Path');
    expect(pathKey({ Path: 'x' }, 'linux')).toBe('PATH');
    expect(envWithPathEntry({}, 'C:\\m', 'win32')).toEqual({ Path: 'C:\\m' });
  });

  it('MB-09 removes the entry case-insensitively on Windows and exactly elsewhere', () => {
    expect(removePathEntry('C:\\M\\BIN;C:\\Windows', 'c:\\m\\bin', 'win32')).toBe('C:\\Windows');
    expect(removePathEntry('/M/bin:/usr/bin', '/m/bin', 'linux')).toBe('/M/bin:/usr/bin');
    expect(removePathEntry('/a:/m:/b:/m', '/m', 'linux')).toBe('/a:/b:/m');
    expect(removePathEntry('/m', '/m', 'linux')).toBeUndefined();
    expect(removePathEntry(undefined, '/m', 'linux')).toBeUndefined();
    expect(prependPathEntry('', '/m', 'linux')).toBe('/m');
    expect(prependPathEntry(undefined, 'C:\\m', 'win32')).toBe('C:\\m');
  });

  it('MB-09 the mock env() of a win32 mock keeps Path casing', async () => {
    await using git = createMockBinary('git', { platform: 'win32' });
    expect(git.env({ Path: 'C:\\Windows' })).toEqual({ Path: `${git.dir};C:\\Windows` });
  });
});
