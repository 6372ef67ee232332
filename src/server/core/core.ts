import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { type MessagePort, receiveMessageOnPort } from 'node:worker_threads';
import type { JournalWriter } from '../../internal/journal.js';
import type { ControlMessage, WorkerSettings } from '../protocol.js';
import { Asker } from './ask.js';
import { Claims, Script } from './claim.js';
import { Claimant } from './claimant.js';
import type { Exchange } from './exchange.js';
import { Holds, WorkerHold } from './holds.js';
import { declaredLength, readRequest } from './intake.js';
import { countConnections, type ListenHandlers, listen } from './listen.js';
import { EntryLog } from './log.js';
import type { CoreParts } from './parts.js';
import { WorkerPlaybook } from './playbook/engine.js';
import { Recorder } from './record.js';
import { clientError, halfSent, tooLarge } from './refuse.js';
import { settle } from './settle.js';
import { carriesToken, unauthorized } from './token.js';

/**
 * The server in its worker thread: the script (expectations, playbooks, FIFO, holds),
 * every claim, and the sockets. Control messages are applied in order,
 * from the port's 'message' event or drained synchronously before every
 * claim; none serves anything inline. Every socket and request callback is
 * guarded: an error ends that request (its log entry says why), never the
 * worker.
 */
export class ServerCore {
  readonly #settings: WorkerSettings;
  readonly #control: MessagePort;
  readonly #log: EntryLog;
  readonly #script: Script;
  readonly #holds = new Holds();
  readonly #asker: Asker;
  readonly #claims: Claims;
  readonly #parts: CoreParts;
  #server: Server | undefined;
  #disposed = false;
  /** Shared with the test's thread: [0] client connections open. */
  readonly #gauges: Int32Array | undefined;

  constructor(
    settings: WorkerSettings,
    control: MessagePort,
    journal: JournalWriter,
    gauges?: SharedArrayBuffer,
  ) {
    this.#settings = settings;
    this.#gauges = gauges === undefined ? undefined : new Int32Array(gauges);
    this.#script = new Script(settings.fifoMethods);
    this.#control = control;
    this.#log = new EntryLog(journal);
    this.#asker = new Asker(this.#log, settings.timeoutMs);
    this.#claims = new Claims(this.#script, this.#asker, () => this.#drain());
    this.#parts = {
      settings,
      script: this.#script,
      holds: this.#holds,
      log: this.#log,
      asker: this.#asker,
      disposed: () => this.#disposed,
      internal: (x, cause) => this.#internal(x, cause),
      drop: (res) => this.#drop(res),
      recorder:
        settings.cassette?.upstream === undefined
          ? undefined
          : new Recorder(settings.cassette, (n, interaction) =>
              this.#log.post({ type: 'recorded', n, interaction }),
            ),
    };
  }

  async start(): Promise<void> {
    this.#control.on('message', (message: ControlMessage) => this.#apply(message));
    const handlers: ListenHandlers = {
      request: (req, res) => this.#guard(res, () => this.#onRequest(req, res)),
      checkContinue: (req, res) =>
        this.#guard(res, () => {
          const declared = declaredLength(req);
          if (declared === undefined || declared <= this.#settings.bodyLimitBytes)
            res.writeContinue();
          this.#onRequest(req, res);
        }),
      clientError: (error, socket) =>
        this.#guard(undefined, () => clientError(this.#parts, error, socket)),
    };
    const listening = await listen(this.#settings.listen, handlers);
    if (!listening.ok) {
      const { address, errno, message } = listening;
      this.#log.post({ type: 'listen-error', address, errno, message });
      this.#control.close();
      return;
    }
    this.#server = listening.server;
    if (this.#gauges) countConnections(listening.server, this.#gauges);
    this.#log.post({ type: 'listening', url: listening.url, socketPath: listening.socketPath });
  }

  #drain(): void {
    for (;;) {
      const received = receiveMessageOnPort(this.#control);
      if (!received) return;
      this.#apply(received.message as ControlMessage);
    }
  }

  #apply(message: ControlMessage): void {
    const script = this.#script;
    switch (message.type) {
      case 'expect': {
        if (message.gen !== script.gen) return;
        const { id, name, match, answer, times } = message;
        script.entries.push({ kind: 'expect', id, name, match, answer, times, used: 0 });
        return;
      }
      case 'playbook': {
        if (message.gen !== script.gen) return;
        const { gen, playbook } = message;
        const { id, name, match } = playbook;
        const worker = new WorkerPlaybook(playbook, (news) =>
          this.#log.post({ type: 'playbook', gen, id, json: JSON.stringify(news) }),
        );
        script.entries.push({ kind: 'playbook', id, name, match, playbook: worker });
        return;
      }
      case 'enqueue':
        if (message.gen !== script.gen) return;
        for (const entry of message.entries) script.fifo.push({ ...entry, used: 0 });
        return;
      case 'hold':
        if (message.gen !== script.gen) return;
        this.#holds.add(
          new WorkerHold(message.id, message.gen, message.match, message.afterEvents),
        );
        return;
      case 'release':
        if (message.gen === script.gen) this.#holds.get(message.id)?.release(message.response);
        return;
      case 'asked':
        this.#asker.progress(message.ask, message.stage);
        return;
      case 'answer':
        this.#asker.answer(
          message.ask,
          message.ok
            ? { kind: 'answer', value: message.value }
            : { kind: 'error', error: message.error },
        );
        return;
      case 'reset':
        script.reset(message.gen);
        this.#asker.cancel(message.gen);
        this.#holds.endAll('reset');
        return;
      case 'dispose':
        setImmediate(() => this.#dispose());
        return;
      case 'sync':
        settle(this.#log, message.flag, message.n);
        return;
      case 'crash':
        setTimeout(() => {
          throw new Error('shimkit: the crash a test asked for (ServerWorkerError path)');
        });
        return;
    }
  }

  #onRequest(req: IncomingMessage, res: ServerResponse): void {
    const { bodyLimitBytes, logBodyBytes } = this.#settings;
    readRequest(req, bodyLimitBytes, logBodyBytes, (intake) =>
      this.#guard(res, () => {
        if (this.#disposed) return;
        const script = this.#script;
        if (intake.tooLarge) return tooLarge(this.#parts, req, res, intake);
        if (intake.aborted) return halfSent(this.#parts, req, intake);
        const token = this.#settings.token;
        if (token !== undefined && !carriesToken(intake.view.headers, token)) {
          return unauthorized(this.#parts, req, res, intake);
        }
        this.#claims.submit(
          new Claimant(this.#parts, req, res, intake, script.gen, script.nextSeq()),
        );
      }),
    );
  }

  /** Run `fn`; whatever it throws ends only that request (its entry, if any, written first). */
  #guard(res: ServerResponse | undefined, fn: () => void): void {
    try {
      fn();
    } catch {
      this.#drop(res);
    }
  }

  /** A request whose handling threw: its connection ends, what the log holds written first. */
  #drop(res: ServerResponse | undefined): void {
    try {
      this.#log.flush();
      res?.destroy();
    } catch {
      // nothing more to do for this request
    }
  }

  /** A bug of shimkit's serving one request: that request ends, its entry says so. */
  #internal(x: Exchange, cause: unknown): void {
    const text = cause instanceof Error ? (cause.stack ?? cause.message) : String(cause);
    try {
      x.patch({ error: `shimkit: an internal error ended ${x.label}: ${text}` });
      x.socket.destroy();
    } catch {
      // the socket is gone already
    }
  }

  #dispose(): void {
    if (this.#disposed) return;
    this.#disposed = true;
    this.#claims.clear();
    this.#asker.cancel();
    this.#holds.endAll('dispose');
    this.#parts.recorder?.dispose();
    const server = this.#server;
    if (server) {
      server.close();
      server.closeAllConnections();
    }
    this.#log.flush();
    this.#log.post({ type: 'disposed' });
    this.#control.close();
  }
}
