import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { controlAddress, firstPositional } from '../../src/cli/server/dir.js';
import { RESPONSE_FLAGS } from '../../src/cli/server/flags.js';

describe('the server dir of shimkit serve (HT-10)', () => {
  it('HT-10 the control address: D/control.sock, or on Windows a named pipe named for the dir (its case ignored)', () => {
    expect(controlAddress('/tmp/a/api', 'linux')).toBe(join('/tmp/a/api', 'control.sock'));
    const pipe = controlAddress('C:\\Users\\me\\api', 'win32');
    expect(pipe).toMatch(/^\\\\\.\\pipe\\shimkit-[0-9a-f]{24}$/);
    expect(controlAddress('c:\\users\\ME\\API', 'win32')).toBe(pipe);
    expect(controlAddress('C:\\Users\\me\\other', 'win32')).not.toBe(pipe);
  });

  it('HT-10 enqueue finds its D before it knows the flags: value flags skip their value, -- ends the flags', () => {
    expect(firstPositional(['D', '--sse-chat', 'x'], RESPONSE_FLAGS)).toBe('D');
    expect(firstPositional(['--sse-chat', 'x', 'D'], RESPONSE_FLAGS)).toBe('D');
    expect(firstPositional(['--status=429', '--unknown', 'D'], RESPONSE_FLAGS)).toBe('D');
    expect(firstPositional(['--json', '-', '--', '-D'], RESPONSE_FLAGS)).toBe('-D');
    expect(firstPositional(['--sse-chat', 'x'], RESPONSE_FLAGS)).toBeUndefined();
  });
});
