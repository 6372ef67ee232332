import { closeSync, lstatSync, renameSync, unlinkSync, writeFileSync, writeSync } from 'node:fs';
import { join, resolve } from 'node:path';
import {
  createMockServer,
  InvalidOptionError,
  type MockServer,
  type MockServerOptions,
  type Playbook,
  type PlaybookJson,
  type ServerCassetteOptions,
  ShimkitError,
  UnusedResponsesError,
} from 'shimkit';
import type { Owner } from '../../internal/leftovers/owner.js';
import { ownerOfPid, parseOwnerText, removeOwnFiles } from '../../internal/leftovers/served.js';
import { type Parsed, parseArgs, positionals } from '../args.js';
import type { Command } from '../command.js';
import { ExitCode, UsageError } from '../exit-codes.js';
import { commandModule } from '../run.js';
import { shQuote } from '../words.js';
import { claimServerDir, type DirClaim, SERVER_LOCK } from './claim.js';
import { listenControl } from './control.js';
import { detach, NOTIFY_VAR, OWNER_VAR, type ServeSettings } from './detach.js';
import {
  assertFreeDir,
  ownServerDir,
  readServerInfo,
  SERVER_JSON,
  type ServerInfo,
} from './dir.js';
import { controlHandler } from './host.js';
import { DEFAULT_IDLE_MS, idleTimeoutMs, type Lifecycle, watchLifecycle } from './lifecycle.js';
import { cliAdvice } from './log.js';
import { startNotice } from './notice.js';
import { readPlaybookFile } from './playbook-file.js';

/** How often the server checks that its dir is still there. */
const DIR_CHECK_MS = 500;

/** `shimkit serve --dir D`: a mock HTTP/SSE server in its own process, scripted by the other commands. */
export const serveCommand: Command = {
  name: 'serve',
  usage:
    'shimkit serve --dir D [--port N] [--host H | --socket PATH] [--require-token] [--strict] [--unmatched fail|echo] [--playbook FILE]... [--cassette FILE [--cassette-mode MODE] [--upstream URL] [--cassette-timing T]] [--log-body-bytes N] [--log-body-budget N] [--detach] [--owner-pid PID] [--idle-timeout DURATION] [--json]',
  help: `Run a mock HTTP/SSE server (createMockServer) for the program under test, until
SIGINT, SIGTERM, \`shimkit stop D\`, D is removed (checked every 500 ms), its owner
exits, or it was idle for --idle-timeout. Once it listens it prints the variables the
OpenAI and Anthropic SDKs read, for the shell to eval:
  export OPENAI_BASE_URL=http://127.0.0.1:PORT/v1
  export ANTHROPIC_BASE_URL=http://127.0.0.1:PORT
  export OPENAI_API_KEY=shimkit-test  (and ANTHROPIC_API_KEY; with --require-token the token)
  export SHIMKIT_SERVER_URL=http://127.0.0.1:PORT
  export NO_PROXY=…,127.0.0.1,localhost,::1,[::1]  (and no_proxy: clients skip any HTTP proxy)
and on stderr what it is bound to and what ends it (with a warning for a bind beyond
loopback, such as --host 0.0.0.0, which other machines can reach).
Script it with \`shimkit expect D\`, \`shimkit enqueue D\` and \`shimkit playbook D FILE\`
(or --playbook here), read what it got with \`shimkit requests D\`, \`shimkit tool-calls D\`
and \`shimkit tool-results D\`, check with \`shimkit verify D\`. D (made 0700 if missing; else a
private dir of yours) holds server.json {"url","pid","startedAt"}, control.sock and
server.lock (its claim: one serve per dir, a second exits 3) while it runs (removed when
it stops), and server.log for --detach.

A detached server ends with its owner: the process that ran \`shimkit serve --detach\` (the
test, or the shell that evals its lines; under npx, npm/pnpm exec, yarn or bunx, the process
that ran those), or --owner-pid. It then removes its files, and D if nothing else is in it.
If it cannot see its owner go, \`shimkit clean\` (and shimkit's own leftover sweep) stops it
once the owner is gone.

Options:
  --dir D              the server's dir (required)
  --port N             the TCP port (default 0: a free one, in the printed URL)
  --host H             the address to listen on (default 127.0.0.1); any local user can
                       reach a loopback port, and other machines a wider one
  --socket PATH        listen on a Unix socket instead of TCP (put it in a 0700 dir, such
                       as D: then only you can connect); prints SHIMKIT_SERVER_SOCKET and
                       SHIMKIT_SERVER_URL (http://localhost) instead of base URLs:
                       curl --unix-socket "$SHIMKIT_SERVER_SOCKET" http://localhost/v1/models
  --require-token      serve only requests carrying a random token (printed as the API
                       keys and SHIMKIT_SERVER_TOKEN) as "authorization: Bearer TOKEN" or
                       "x-api-key: TOKEN"; others get 401 and take nothing scripted
  --strict             \`verify\` also fails for requests no scripted response answered
  --unmatched MODE     a request nothing answers gets "fail" (default: a 500 naming the
                       closest expectation) or "echo" (its own body back)
  --playbook FILE      play the model with this playbook (its JSON form; see
                       \`shimkit playbook --help\`), before any request is served;
                       may be given more than once
  --cassette FILE      record a real API's answers to FILE, or replay them (createMockServer's
                       cassette option): each request nothing scripted answers is passed to
                       --upstream and recorded, or answered from FILE; written at stop
  --cassette-mode MODE record, replay, auto (default: replay if FILE exists, else record)
                       or record-missing (replay, and record what FILE lacks);
                       SHIMKIT_CASSETTE_MODE overrides it
  --upstream URL       where recording passes requests (https://api.openai.com); needed by
                       a mode that records, unused on replay
  --cassette-timing T  on replay, "recorded" sends SSE events at their recorded pace
                       (default "none": at once)
  --log-body-bytes N   keep the first N bytes of each request body in the log (default
                       1M; K and M suffixes are KiB and MiB)
  --log-body-budget N  keep at most N bytes of request bodies in all (default 64M): past
                       it the oldest requests lose their body ("bodyDropped" in
                       \`shimkit requests --jsonl\`), so a long run stays within bounded memory
  --detach             start the server in the background (its own process group, output
                       to D/server.log), print the lines once it listens, and exit 0
  --owner-pid PID      the process the server ends with (default with --detach: the one
                       that ran this command; 0: none; without --detach: none)
  --idle-timeout DURATION
                       stop after this long with no request and no command, such as 30m,
                       90s, 2h or 500ms (default 30m; 0: never)
  --json               print {"url","pid","dir","env"} instead of export lines

Examples:
  eval "$(shimkit serve --dir "$BATS_TEST_TMPDIR/api" --detach)"
  shimkit serve --dir /tmp/api --port 8080 --strict
  eval "$(shimkit serve --dir "$D" --playbook agent.json --strict --detach)"
  eval "$(shimkit serve --dir "$D" --require-token --detach)"
  eval "$(shimkit serve --dir "$D" --socket "$D/api.sock" --detach)"
  shimkit serve --dir /tmp/api --detach --owner-pid $$ --idle-timeout 2h --json`,
  async run(argv) {
    const args = parseArgs('serve', argv, {
      dir: { kind: 'value', value: 'D' },
      port: { kind: 'value', value: 'N' },
      host: { kind: 'value', value: 'H' },
      strict: { kind: 'switch' },
      unmatched: { kind: 'value', value: 'fail|echo' },
      playbook: { kind: 'list', value: 'FILE' },
      cassette: { kind: 'value', value: 'FILE' },
      'cassette-mode': { kind: 'value', value: 'record|replay|auto|record-missing' },
      upstream: { kind: 'value', value: 'URL' },
      'cassette-timing': { kind: 'value', value: 'none|recorded' },
      'log-body-bytes': { kind: 'value', value: 'N' },
      'log-body-budget': { kind: 'value', value: 'N' },
      detach: { kind: 'switch' },
      'owner-pid': { kind: 'value', value: 'PID' },
      'idle-timeout': { kind: 'value', value: 'DURATION' },
      socket: { kind: 'value', value: 'PATH' },
      'require-token': { kind: 'switch' },
      json: { kind: 'switch' },
    });
    positionals('serve', args, []);
    const settings = serveSettings(args);
    if (args.switches.has('detach')) return detach(settings);
    return serve(settings);
  },
};

function serveSettings(args: Parsed): ServeSettings {
  const dir = args.values.get('dir');
  if (dir === undefined) {
    throw new UsageError(
      'serve',
      'which dir? Pass --dir D, e.g. shimkit serve --dir "$BATS_TEST_TMPDIR/api" (it is made if missing).',
    );
  }
  const listen: { host?: string; port?: number } = {};
  const port = args.values.get('port');
  if (port !== undefined) {
    if (!/^\d{1,5}$/.test(port) || Number(port) > 65535) {
      throw new UsageError(
        'serve',
        `--port takes a TCP port from 0 to 65535, got ${JSON.stringify(port)}.`,
      );
    }
    listen.port = Number(port);
  }
  const host = args.values.get('host');
  if (host !== undefined) {
    if (host === '')
      throw new UsageError('serve', '--host takes an address, such as 127.0.0.1 or ::1.');
    listen.host = host;
  }
  const unmatched = args.values.get('unmatched');
  if (unmatched !== undefined && unmatched !== 'fail' && unmatched !== 'echo') {
    throw new UsageError(
      'serve',
      `--unmatched takes "fail" or "echo", got ${JSON.stringify(unmatched)}.`,
    );
  }
  const strict = args.switches.has('strict');
  if (strict && unmatched === 'echo') {
    throw new UsageError(
      'serve',
      '--strict needs --unmatched fail: under --strict an unmatched request is a failure, which "echo" would hide. Leave out one of the two.',
    );
  }
  const playbooks = (args.lists.get('playbook') ?? []).map((file) => {
    if (file === '-') {
      throw new UsageError(
        'serve',
        '--playbook takes a file (a detached server reads it again); for stdin, add it once the server runs: shimkit playbook D - < playbook.json.',
      );
    }
    return readPlaybookFile('serve', file);
  });
  const ownerText = args.values.get('owner-pid');
  if (ownerText !== undefined && !/^\d{1,10}$/.test(ownerText)) {
    throw new UsageError(
      'serve',
      `--owner-pid takes a process id (0 for none), got ${JSON.stringify(ownerText)}.`,
    );
  }
  const idle = args.values.get('idle-timeout');
  const socket = args.values.get('socket');
  if (socket !== undefined && (host !== undefined || port !== undefined)) {
    throw new UsageError(
      'serve',
      '--socket listens on a Unix socket, not on TCP: leave out --host and --port.',
    );
  }
  if (socket === '') throw new UsageError('serve', '--socket takes a path, such as "$D/api.sock".');
  return {
    dir,
    listen,
    strict,
    unmatched,
    json: args.switches.has('json'),
    cassette: cassetteSettings(args),
    logBodyBytes: byteCount('--log-body-bytes', args.values.get('log-body-bytes')),
    logBodyBudget: byteCount('--log-body-budget', args.values.get('log-body-budget')),
    playbooks,
    ownerPid: ownerText === undefined ? undefined : Number(ownerText),
    idleMs: idle === undefined ? DEFAULT_IDLE_MS : idleTimeoutMs(idle),
    socket: socket === undefined ? undefined : resolve(socket),
    requireToken: args.switches.has('require-token'),
  };
}

const CASSETTE_MODES = ['record', 'replay', 'auto', 'record-missing'];

/** `--cassette FILE` and the flags that go with it (the library checks the rest when the server starts). */
function cassetteSettings(args: Parsed): ServeSettings['cassette'] {
  const file = args.values.get('cassette');
  const mode = args.values.get('cassette-mode');
  const upstream = args.values.get('upstream');
  const timing = args.values.get('cassette-timing');
  if (file === undefined) {
    const stray = [
      ['cassette-mode', mode],
      ['upstream', upstream],
      ['cassette-timing', timing],
    ].find(([, value]) => value !== undefined);
    if (stray) {
      throw new UsageError(
        'serve',
        `--${stray[0]} goes with --cassette FILE (e.g. --cassette chat.cassette.json --cassette-mode record --upstream https://api.openai.com).`,
      );
    }
    return undefined;
  }
  if (file === '' || file === '-') {
    throw new UsageError(
      'serve',
      '--cassette takes a file path (it is read, and written at stop).',
    );
  }
  if (mode !== undefined && !CASSETTE_MODES.includes(mode)) {
    throw new UsageError(
      'serve',
      `--cassette-mode takes record, replay, auto or record-missing, got ${JSON.stringify(mode)}.`,
    );
  }
  if (timing !== undefined && timing !== 'none' && timing !== 'recorded') {
    throw new UsageError(
      'serve',
      `--cassette-timing takes "none" or "recorded", got ${JSON.stringify(timing)}.`,
    );
  }
  return {
    path: resolve(file),
    ...(mode === undefined ? {} : { mode }),
    ...(upstream === undefined ? {} : { upstream }),
    ...(timing === undefined ? {} : { timing }),
  };
}

/** The default of `--log-body-budget`: a daemon runs on, so it keeps less than the library's 256 MiB. */
const LOG_BODY_BUDGET = 64 * 1024 * 1024;

/** `65536`, `64K`, `1M`: bytes (K and M are 1024 and 1024²). */
function byteCount(flag: string, text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const m = /^(\d+)([KkMm]?)$/.exec(text);
  const n = m
    ? Number(m[1]) * (m[2] === '' ? 1 : /k/i.test(m[2] as string) ? 1024 : 1024 ** 2)
    : NaN;
  if (!Number.isSafeInteger(n) || n > 2 ** 32 - 1) {
    throw new UsageError(
      'serve',
      `${flag} takes a number of bytes (such as 65536, 64K or 1M) up to 4 GiB, got ${JSON.stringify(text)}.`,
    );
  }
  return n;
}

async function serve(settings: ServeSettings): Promise<number> {
  const notify = takeNotifyFd();
  const owner = takeOwner(settings);
  const root = ownServerDir(settings.dir, true);
  assertFreeDir(root);
  const claim = claimServerDir(root); // exclusive: of two serves started at once, one exits 3 here
  try {
    return await serveClaimed(settings, root, claim, notify, owner);
  } finally {
    claim.release();
  }
}

async function serveClaimed(
  settings: ServeSettings,
  root: string,
  claim: DirClaim,
  notify: number | undefined,
  owner: Owner | undefined,
): Promise<number> {
  const options: MockServerOptions = {
    strict: settings.strict,
    listen: settings.socket === undefined ? settings.listen : { path: settings.socket },
    logBodyBudgetBytes: settings.logBodyBudget ?? LOG_BODY_BUDGET,
    unmatchedAdvice: cliAdvice(root),
  };
  if (settings.requireToken) options.requireToken = true;
  if (settings.logBodyBytes !== undefined) options.logBodyBytes = settings.logBodyBytes;
  if (settings.cassette) options.cassette = settings.cassette as ServerCassetteOptions;
  if (settings.unmatched) options.unmatched = settings.unmatched;
  const api = await createMockServer(options);
  const playbooks: Playbook[] = [];
  try {
    for (const { path, json } of settings.playbooks) {
      try {
        playbooks.push(api.playbook(json as PlaybookJson));
      } catch (error) {
        if (!(error instanceof InvalidOptionError)) throw error;
        throw new InvalidOptionError(`--playbook ${path}: ${error.message}`);
      }
    }
  } catch (error) {
    await dispose(api);
    throw error;
  }
  let lifecycle: Lifecycle | undefined;
  let stop: () => void = () => {};
  const stopped = new Promise<void>((resolve) => {
    stop = resolve;
  });
  let control: Awaited<ReturnType<typeof listenControl>>;
  try {
    const handle = controlHandler(api, () => stop(), playbooks);
    control = await listenControl(root, (request) => {
      lifecycle?.touch();
      return handle(request);
    });
  } catch (error) {
    await dispose(api);
    throw new ShimkitError(
      'ERR_SHIMKIT_SERVER_CONTROL',
      `cannot listen for control requests in ${root}: ${(error as Error).message}.`,
    );
  }
  const info: ServerInfo = { url: api.url, pid: process.pid, startedAt: Date.now() };
  writeAtomic(join(root, SERVER_JSON), `${JSON.stringify(info)}\n`);
  lifecycle = watchLifecycle(api, root, owner, settings.idleMs);
  const text = readyText(api, root, settings);
  process.stdout.write(text);
  process.stderr.write(startNotice(root, settings, owner?.pid, false));
  if (notify !== undefined) {
    try {
      writeSync(notify, text);
      closeSync(notify);
    } catch {
      // the `serve --detach` that waited is gone: the log has the lines
    }
  }
  const signals = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;
  const onSignal = () => stop();
  for (const signal of signals) process.on(signal, onSignal);
  const identity = lstatSync(root);
  const watch = setInterval(() => {
    try {
      const now = lstatSync(root);
      if (now.ino !== identity.ino || now.dev !== identity.dev) stop();
    } catch {
      stop(); // D was removed
    }
    const why = lifecycle?.check();
    if (why !== undefined) {
      process.stderr.write(`shimkit serve: stopping: ${why}.\n`);
      stop();
    }
    if (!claim.held()) {
      process.stderr.write(
        `shimkit serve: ${join(root, SERVER_LOCK)} is no longer this server's (pid ${process.pid}): stopping.\n`,
      );
      stop();
    }
  }, DIR_CHECK_MS);
  await stopped;
  clearInterval(watch);
  for (const signal of signals) process.off(signal, onSignal);
  await control.close();
  await dispose(api);
  if (lifecycle.ownerGone) {
    claim.release();
    removeOwnFiles(root); // no one is left to read them: D goes too, if nothing else is in it
  } else {
    removeIfOurs(join(root, SERVER_JSON));
  }
  lifecycle.release();
  return ExitCode.ok;
}

/** The lines for the shell (or the JSON object): what env() sets, and SHIMKIT_SERVER_URL. */
function readyText(api: MockServer, dir: string, settings: ServeSettings): string {
  const json = settings.json;
  if (settings.socket !== undefined) return socketReadyText(api, dir, settings);
  const base = process.env;
  const all = api.env(base);
  const env: Record<string, string> = {};
  const names = Object.keys(all).filter((name) => base[name] !== all[name]);
  for (const name of names) if (!/^no_proxy$/i.test(name)) env[name] = all[name] as string;
  env.SHIMKIT_SERVER_URL = api.url;
  if (api.token !== undefined) env.SHIMKIT_SERVER_TOKEN = api.token;
  for (const name of names) if (/^no_proxy$/i.test(name)) env[name] = all[name] as string;
  if (json) return `${JSON.stringify({ url: api.url, pid: process.pid, dir, env })}\n`;
  return Object.entries(env)
    .map(([name, value]) => `export ${name}=${shQuote(value)}\n`)
    .join('');
}

/**
 * The owner to watch: the one `serve --detach` handed over (the env var,
 * taken out of the env), else `--owner-pid` (a foreground serve watches
 * none without it).
 */
function takeOwner(settings: ServeSettings): Owner | undefined {
  const handed = process.env[OWNER_VAR];
  delete process.env[OWNER_VAR];
  if (handed !== undefined) return parseOwnerText(handed);
  if (settings.ownerPid === undefined || settings.ownerPid === 0) return undefined;
  const owner = ownerOfPid(settings.ownerPid);
  if (!owner) {
    throw new UsageError(
      'serve',
      `--owner-pid ${settings.ownerPid}: no such process runs. Pass the pid of the process the server should end with (e.g. $$ in a shell), or 0 for none.`,
    );
  }
  return owner;
}

/**
 * On a Unix socket there is no base URL for an SDK (env() refuses such a
 * server): the socket's path, the URL's origin and the token, if any.
 */
function socketReadyText(api: MockServer, dir: string, settings: ServeSettings): string {
  const env: Record<string, string> = {
    SHIMKIT_SERVER_SOCKET: settings.socket as string,
    SHIMKIT_SERVER_URL: api.url,
  };
  if (api.token !== undefined) env.SHIMKIT_SERVER_TOKEN = api.token;
  if (settings.json) return `${JSON.stringify({ url: api.url, pid: process.pid, dir, env })}\n`;
  return Object.entries(env)
    .map(([name, value]) => `export ${name}=${shQuote(value)}\n`)
    .join('');
}

/** The fd a `serve --detach` waits on for the ready lines (then closed), taken out of the env. */
function takeNotifyFd(): number | undefined {
  const value = process.env[NOTIFY_VAR];
  delete process.env[NOTIFY_VAR];
  return value !== undefined && /^\d+$/.test(value) ? Number(value) : undefined;
}

async function dispose(api: MockServer): Promise<void> {
  try {
    await api.dispose();
  } catch (error) {
    // strict: the report is `shimkit verify`'s to give; everything is cleaned up before it throws
    if (!(error instanceof UnusedResponsesError)) throw error;
  }
}

function writeAtomic(path: string, text: string): void {
  const temporary = `${path}.${process.pid}.tmp`;
  writeFileSync(temporary, text, { mode: 0o600 });
  renameSync(temporary, path);
}

/** Remove server.json if it still names this process (a later server may have taken the dir). */
function removeIfOurs(path: string): void {
  try {
    if (readServerInfo(join(path, '..')).pid === process.pid) unlinkSync(path);
  } catch {
    // gone with D
  }
}

export const { exec, help } = commandModule(serveCommand);
