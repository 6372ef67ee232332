/**
 * Descriptors of shimkit's own machinery that lives as long as the process
 * and is made on first use, inside some test: the PTY helper kept warm for
 * the next spawn. The leak sanitizer's fd diff (LK-03) leaves them out, so
 * the test that happened to start it is not blamed.
 */
/** fd → the mark that holds it (a number closed and reused belongs to the newer mark). */
const fds = new Map<number, object>();

/** The fd of a stream from `child.stdio`, where Node says it. */
function fdOf(stream: unknown): number | undefined {
  const fd = (stream as { _handle?: { fd?: unknown } } | null)?._handle?.fd;
  return typeof fd === 'number' && fd >= 0 ? fd : undefined;
}

/** Mark the fds of `streams` as shimkit's own; returns a function that unmarks them. */
export function markInfrastructure(streams: readonly unknown[]): () => void {
  const marked = streams.map(fdOf).filter((fd): fd is number => fd !== undefined);
  const mark = {};
  for (const fd of marked) fds.set(fd, mark);
  return () => {
    for (const fd of marked) if (fds.get(fd) === mark) fds.delete(fd);
  };
}

/** Whether `fd` is one of shimkit's own. */
export function isInfrastructureFd(fd: number): boolean {
  return fds.has(fd);
}
