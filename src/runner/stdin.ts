/** Read stdin to EOF, keeping at most `limit` bytes (the rest is read and dropped). */
export function readStdin(limit: number): Promise<{ data: Buffer; truncated: boolean }> {
  return new Promise((done) => {
    const chunks: Buffer[] = [];
    let kept = 0;
    let truncated = false;
    const stdin = process.stdin;
    stdin.on('data', (chunk: Buffer) => {
      const room = limit - kept;
      if (chunk.length > room) truncated = true;
      if (room > 0) {
        const part = chunk.length > room ? chunk.subarray(0, room) : chunk;
        chunks.push(part);
        kept += part.length;
      }
    });
    const end = () => done({ data: Buffer.concat(chunks), truncated });
    stdin.on('end', end);
    stdin.on('error', end);
  });
}
