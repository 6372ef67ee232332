import { createServer } from 'node:net';
import { InvalidOptionError } from '../internal/errors.js';
import { sweepOnce } from '../internal/leftovers/sweep.js';
import { checkOptionKeys } from '../internal/options.js';
import {
  type Address,
  assertPipeFree,
  clearStaleSocket,
  type ListenAddress,
  listenError,
  resolveAddress,
} from './address.js';
import { FrameProxy } from './proxy.js';
import type { FrameProxyOptions } from './proxy-options.js';
import { resolveSettings, SETTING_KEYS } from './settings.js';

/**
 * Start a frame proxy. Resolves once it is listening; rejects with an
 * `InvalidOptionError` for a bad option and a `ProxyListenError` when it
 * cannot listen there. The proxy does not keep the process alive by itself
 * (see `ref()`), and is closed if the process exits first.
 *
 * @example
 * await using proxy = await createFrameProxy({
 *   listen: join(dir, 'proxy.sock'),
 *   upstream: join(dir, 'server.sock'),
 *   faults: [{ action: 'drop', direction: 'c2s', frame: 2 }],
 * });
 * const client = connect(proxy.address); // a string here: `listen` was a path
 * await proxy.waitForFrames('c2s', 3);
 */
export async function createFrameProxy<L extends Address>(
  options: FrameProxyOptions<L>,
): Promise<FrameProxy<ListenAddress<L>>> {
  const where = 'createFrameProxy()';
  checkOptionKeys(options, ['listen', 'upstream', ...SETTING_KEYS], where);
  if (options === undefined) {
    throw new InvalidOptionError(
      `${where} needs options: at least \`listen\` and \`upstream\`, e.g. createFrameProxy({ listen: join(dir, 'proxy.sock'), upstream: serverPath }).`,
    );
  }
  const listen = resolveAddress(options.listen, 'listen', where);
  const upstream = resolveAddress(options.upstream, 'upstream', where);
  const settings = resolveSettings(options, where);
  sweepOnce(); // requirement SP-11: what dead test processes left, on the first use
  if (listen.kind === 'unix') await clearStaleSocket(listen.path);
  if (listen.kind === 'pipe') await assertPipeFree(listen);

  const server = createServer({ allowHalfOpen: true, pauseOnConnect: true });
  await new Promise<void>((resolve, reject) => {
    const failed = (error: Error) => reject(listenError(listen, error));
    server.once('error', failed);
    const ready = () => {
      server.off('error', failed);
      resolve();
    };
    if (listen.kind !== 'tcp') server.listen(listen.path, ready);
    else server.listen(listen.port, listen.host, ready);
  });
  return FrameProxy.create<ListenAddress<L>>({ server, listen, upstream, ...settings });
}
