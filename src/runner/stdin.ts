/**
 * Read stdin until EOF, keeping at most `limit` bytes (the rest is read and
 * dropped) — or until no input has come for `idleMs` (0: no such limit): a
 * caller that keeps stdin open and writes nothing (`execFile` does) is then
 * answered instead of waiting forever. `open` says the capture ended that way.
 */
export function readStdin(
  limit: number,
  idleMs: number,
): Promise<{ data: Buffer; truncated: boolean; open: boolean }> {
  return new Promise((done) => {
    const chunks: Buffer[] = [];
    let kept = 0;
    let truncated = false;
    let idle: NodeJS.Timeout | undefined;
    const stdin = process.stdin;
    const end = (open: boolean) => {
      clearTimeout(idle);
      stdin.removeAllListeners('data');
      stdin.pause();
      done({ data: Buffer.concat(chunks), truncated, open });
    };
    const wait = () => {
      if (idleMs <= 0) return;
      clearTimeout(idle);
      idle = setTimeout(() => end(true), idleMs);
    };
    stdin.on('data', (chunk: Buffer) => {
      wait();
      const room = limit - kept;
      if (chunk.length > room) truncated = true;
      if (room > 0) {
        const part = chunk.length > room ? chunk.subarray(0, room) : chunk;
        chunks.push(part);
        kept += part.length;
      }
    });
    stdin.once('end', () => end(false));
    stdin.once('error', () => end(false));
    wait();
  });
}
