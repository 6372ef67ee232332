import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { type MessagePort, receiveMessageOnPort } from 'node:worker_threads';
import type { ControlMessage, WireClaim, WireEntry, WorkerSettings } from '../protocol.js';
import type { WireHttpResponse } from '../types.js';
import { Asker, waitedFor } from './ask.js';
import { type ClaimResult, Claims, type PendingClaim, Script } from './claim.js';
import { Exchange } from './exchange.js';
import { Holds, WorkerHold } from './holds.js';
import { declaredLength, type Intake, readRequest } from './intake.js';
import { type ListenHandlers, listen } from './listen.js';
import { EntryLog } from './log.js';
import { serve } from './serve.js';
import { echoResponse, errorResponse, unmatchedText } from './unmatched.js';

/**
 * The server in its worker thread: the script (expectations, FIFO, holds),
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
  readonly #script = new Script();
  readonly #holds = new Holds();
  readonly #asker: Asker;
  readonly #claims: Claims;
  #server: Server | undefined;
  #disposed = false;

  constructor(settings: WorkerSettings, control: MessagePort, events: MessagePort) {
    this.#settings = settings;
    this.#control = control;
    this.#log = new EntryLog(events);
    this.#asker = new Asker(this.#log, settings.timeoutMs);
    this.#claims = new Claims(this.#script, this.#asker, () => this.#drain());
  }

  async start(): Promise<void> {
    this.#control.on('message', (message: ControlMessage) => this.#apply(message));
    const handlers: ListenHandlers = {
      request: (req, res) => this.#guard(res, () => this.#onRequest(req, res)),
      checkContinue: (req, res) =>
        this.#guard(res, () => {
          const declared = declaredLength(req);
          if (declared === undefined || declared <= this.#settings.bodyLimitBytes) res.writeContinue();
          this.#onRequest(req, res);
        }),
      clientError: (error, socket) => this.#guard(undefined, () => this.#clientError(error, socket)),
    };
    const listening = await listen(this.#settings.listen, handlers);
    if (!listening.ok) {
      const { address, errno, message } = listening;
      this.#log.post({ type: 'listen-error', address, errno, message });
      this.#control.close();
      return;
    }
    this.#server = listening.server;
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
      case 'expect':
        if (message.gen !== script.gen) return;
        script.expectations.push({ ...message, used: 0 });
        return;
      case 'enqueue':
        if (message.gen !== script.gen) return;
        for (const entry of message.entries) script.fifo.push({ ...entry, used: 0 });
        return;
      case 'hold':
        if (message.gen !== script.gen) return;
        this.#holds.add(new WorkerHold(message.id, message.gen, message.match, message.afterEvents));
        return;
      case 'release':
        if (message.gen === script.gen) this.#holds.get(message.id)?.release(message.response);
        return;
      case 'answer':
        this.#asker.answer(
          message.ask,
          message.ok ? { kind: 'answer', value: message.value } : { kind: 'error', error: message.error },
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
        if (intake.tooLarge) return this.#tooLarge(req, res, intake);
        const pending: PendingClaim = {
          gen: script.gen,
          seq: script.nextSeq(),
          view: intake.view,
          label: () => labelOf(intake, pending.seq),
          entry: () => this.#entry(intake, pending.seq, null, null, undefined),
          verdicts: new Map(),
          done: (result) => this.#guard(res, () => this.#claimed(req, res, intake, pending, result)),
        };
        this.#claims.submit(pending);
      }),
    );
  }

  #claimed(
    req: IncomingMessage,
    res: ServerResponse,
    intake: Intake,
    pending: PendingClaim,
    result: ClaimResult,
  ): void {
    const { gen, seq, view } = pending;
    const label = pending.label();
    let claim: WireClaim = null;
    let claimedBy: string | null = null;
    let wire: WireHttpResponse | undefined;
    let handler: { id: number; what: string; kind: 'handler' | 'unmatched' } | undefined;
    let error: string | undefined;
    if (result.kind === 'expect' || result.kind === 'fifo') {
      claim = result.kind === 'expect' ? { expect: result.id } : { fifo: result.index };
      claimedBy = result.kind === 'expect' ? result.name : `fifo#${result.index}`;
      const what = result.kind === 'expect' ? `expectation '${result.name}'` : `FIFO entry ${claimedBy}`;
      if ('wire' in result.answer) wire = result.answer.wire;
      else handler = { id: result.answer.handler, what: `the response function of ${what}`, kind: 'handler' };
    } else if (result.kind === 'failed') {
      error = result.error;
      wire = errorResponse(500, 'shimkit_predicate_failed', error);
    } else if (this.#settings.unmatched === 'fail') {
      error = unmatchedText(this.#script, view, label, pending.verdicts);
      wire = errorResponse(500, 'shimkit_unmatched', error);
    } else if (this.#settings.unmatched === 'echo') {
      wire = echoResponse(view);
    } else {
      handler = { id: 0, what: 'the unmatched function of createMockServer()', kind: 'unmatched' };
    }
    const hold = this.#holds.bind(view, seq);
    const entry = this.#entry(intake, seq, claim, claimedBy, error);
    entry.unmatched = result.kind === 'unmatched';
    entry.hold = hold?.id;
    this.#log.entry(gen, entry);
    if (hold) this.#log.post({ type: 'held', gen, id: hold.id, seq, stage: 'received' });
    const x = new Exchange({ gen, seq, req, res, log: this.#log, timeoutMs: this.#settings.timeoutMs, hold, label });
    const run = async () => {
      if (handler) {
        const outcome = await this.#asker.ask(gen, handler.kind, handler.id, claimedBy ?? '', entry);
        if (outcome.kind === 'answer' && typeof outcome.value === 'object') wire = outcome.value;
        else if (outcome.kind === 'cancelled' && this.#disposed) return;
        else {
          error =
            outcome.kind === 'timeout'
              ? waitedFor(handler.what, label, outcome.ms)
              : outcome.kind === 'error'
                ? `shimkit: ${handler.what} failed for ${label}: ${outcome.error}`
                : `shimkit: ${handler.what} for ${label} was ended by reset().`;
          wire = errorResponse(500, 'shimkit_handler_failed', error);
        }
      }
      await serve(x, wire as WireHttpResponse, error);
    };
    run().catch((cause: unknown) => this.#internal(x, cause));
  }

  #tooLarge(req: IncomingMessage, res: ServerResponse, intake: Intake): void {
    const script = this.#script;
    const seq = script.nextSeq();
    const label = labelOf(intake, seq);
    const error = `shimkit: the body of ${label} has ${intake.bodyBytes} bytes, over the limit of ${this.#settings.bodyLimitBytes} (the bodyLimitBytes option of createMockServer()); answered 413.`;
    this.#log.entry(script.gen, this.#entry(intake, seq, null, null, error));
    const x = new Exchange({ gen: script.gen, seq, req, res, log: this.#log, timeoutMs: 0, hold: undefined, label });
    const wire = errorResponse(413, 'shimkit_body_too_large', error);
    wire.headers.push(['connection', 'close']);
    serve(x, wire, error).catch((cause: unknown) => this.#internal(x, cause));
  }

  #clientError(error: NodeJS.ErrnoException & { rawPacket?: Buffer; reason?: string }, socket: Socket): void {
    if (error.code === 'ECONNRESET' || !socket.writable || this.#disposed) {
      socket.destroy();
      return;
    }
    const script = this.#script;
    const seq = script.nextSeq();
    if (error.code === 'HPE_INVALID_EOF_STATE') {
      // The client closed its connection in the middle of a request: nobody to answer.
      const message = `shimkit: the client closed its connection in the middle of request #${seq} (HPE_INVALID_EOF_STATE); nothing was answered.`;
      const raw = error.rawPacket ?? Buffer.alloc(0);
      const entry = this.#entry(
        { view: { method: '', path: '', query: {}, headers: {}, body: raw }, receivedAt: Date.now(), bodyBytes: raw.length, tooLarge: false },
        seq,
        null,
        null,
        message,
      );
      Object.assign(entry, { endedBy: 'client-abort', endedAt: Date.now() });
      this.#log.entry(script.gen, entry);
      socket.destroy();
      return;
    }
    const status =
      error.code === 'HPE_HEADER_OVERFLOW' ? 431 : error.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : 400;
    const reason = error.reason ?? error.message;
    const message = `shimkit: request #${seq} is not well-formed HTTP (${error.code ?? 'parse error'}: ${reason}); answered ${status}.`;
    const raw = error.rawPacket ?? Buffer.alloc(0);
    const intake: Intake = {
      view: { method: '', path: '', query: {}, headers: {}, body: raw },
      receivedAt: Date.now(),
      bodyBytes: raw.length,
      tooLarge: false,
    };
    const body = errorResponse(status, 'shimkit_bad_request', message).pieces[0] as Uint8Array;
    const entry = this.#entry(intake, seq, null, null, message);
    Object.assign(entry, { status, bytesSent: body.length, endedBy: 'complete', startedAt: Date.now() });
    this.#log.entry(script.gen, entry);
    const head = `HTTP/1.1 ${status} ${status === 400 ? 'Bad Request' : status === 431 ? 'Request Header Fields Too Large' : 'Request Timeout'}\r\ncontent-type: application/json\r\nx-should-retry: false\r\nconnection: close\r\ncontent-length: ${body.length}\r\n\r\n`;
    socket.end(Buffer.concat([Buffer.from(head), body]), () =>
      this.#log.patch(script.gen, seq, { endedAt: Date.now() }),
    );
  }

  #entry(
    intake: Intake,
    seq: number,
    claim: WireClaim,
    claimedBy: string | null,
    error: string | undefined,
  ): WireEntry {
    const { view } = intake;
    return {
      seq,
      method: view.method,
      path: view.path,
      query: view.query,
      headers: view.headers,
      // A copy of its own: a view on a bigger buffer would be cloned whole.
      body: new Uint8Array(view.body.subarray(0, this.#settings.logBodyBytes)),
      bodyBytes: intake.bodyBytes,
      receivedAt: intake.receivedAt,
      claimedBy,
      claim,
      error,
      unmatched: false,
      hold: undefined,
      status: undefined,
      bytesSent: 0,
      events: 0,
      endedBy: undefined,
      startedAt: undefined,
      endedAt: undefined,
    };
  }

  /** Run `fn`; whatever it throws ends only that request. */
  #guard(res: ServerResponse | undefined, fn: () => void): void {
    try {
      fn();
    } catch {
      try {
        res?.destroy();
      } catch {
        // nothing more to do for this request
      }
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

function labelOf(intake: Intake, seq: number): string {
  return `${intake.view.method} ${intake.view.path} (request #${seq})`;
}
