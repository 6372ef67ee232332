import { shQuote } from '../words.js';
import type { ServeSettings } from './detach.js';
import { readServerInfo } from './dir.js';
import { durationText } from './lifecycle.js';

/**
 * What `shimkit serve` says on stderr once it listens (stdout is for the
 * shell to eval): what it is bound to — which may be more than its URL
 * shows — and what ends it. `warn`: add the warning for a bind beyond
 * loopback (HT-15) — the `serve --detach` that waited does; the server
 * itself has createMockServer()'s process warning on its stderr already.
 */
export function startNotice(
  root: string,
  settings: ServeSettings,
  ownerPid: number | undefined,
  warn: boolean,
): string {
  let info: { url: string; pid: number };
  try {
    info = readServerInfo(root);
  } catch {
    return ''; // gone already (stopped at once): nothing to say
  }
  const bound = boundText(settings, info.url);
  const ends = [`\`shimkit stop ${shQuote(root)}\``];
  if (ownerPid !== undefined) ends.push(`when process ${ownerPid} (its owner) exits`);
  if (settings.idleMs > 0) {
    ends.push(
      `after ${durationText(settings.idleMs)} without a request or a command (--idle-timeout)`,
    );
  }
  const last = ends.pop() as string;
  let text = `shimkit serve: pid ${info.pid} serves ${bound}; it stops with ${ends.length ? `${ends.join(', ')}, or ${last}` : last}.\n`;
  const host = settings.listen.host;
  if (warn && settings.socket === undefined && host !== undefined && !isLoopback(host)) {
    text += `shimkit serve: warning: ${nonLoopbackWarning(host)}\n`;
  }
  return text;
}

function boundText(settings: ServeSettings, url: string): string {
  if (settings.socket !== undefined) return `the Unix socket ${settings.socket}`;
  const port = /:(\d+)$/.exec(url)?.[1] ?? '?';
  const host = settings.listen.host ?? '127.0.0.1';
  const address = host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
  return address === url.replace(/^http:\/\//, '') ? url : `${url} (bound to ${address})`;
}

/** Whether `host` names only this machine: 127.0.0.0/8, ::1, localhost. */
export function isLoopback(host: string): boolean {
  return /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host) || /^(::1|\[::1\]|localhost)$/i.test(host);
}

export function nonLoopbackWarning(host: string): string {
  const all = host === '0.0.0.0' || host === '::' ? ', every address of this machine' : '';
  return `bound to ${host}${all}, not loopback: other machines on its networks can reach this server and claim its scripted responses. Use --host 127.0.0.1 (the default), or on a shared host --socket PATH and --require-token.`;
}
