/**
 * A server bound beyond loopback (HT-15): `listen: { host: '0.0.0.0' }`
 * gives a `url` on 127.0.0.1, which a client can use, but the port is open
 * to every machine on the host's networks. createMockServer() says so once
 * per process and address, as a process warning (code
 * `SHIMKIT_NON_LOOPBACK`), which Node prints to stderr and a test runner
 * shows; `process.on('warning')` can turn it into a failure.
 */

const warned = new Set<string>();

/** Whether `host` names only this machine: 127.0.0.0/8, ::1, localhost. */
export function isLoopbackHost(host: string): boolean {
  return /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host) || /^(::1|\[::1\]|localhost)$/i.test(host);
}

export function warnIfExposed(host: string, url: string): void {
  if (isLoopbackHost(host)) return;
  const port = /:(\d+)$/.exec(url)?.[1] ?? '?';
  const address = host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
  if (warned.has(address)) return;
  warned.add(address);
  const all = host === '0.0.0.0' || host === '::' ? ', every address of this machine' : '';
  process.emitWarning(
    `createMockServer() listens on ${address}${all}, not on loopback (its url, ${url}, does not show it): other machines on this host's networks can reach it and take its scripted responses. Leave out listen.host (127.0.0.1), or on a shared host listen on a Unix socket ({ path }) and/or set requireToken: true.`,
    { code: 'SHIMKIT_NON_LOOPBACK' },
  );
}
