import { join } from 'node:path';
import { MessageChannel, type MessagePort, Worker } from 'node:worker_threads';
import { JournalReader, journalFlags } from '../internal/journal.js';
import { packageFile } from '../internal/package-files.js';
import { ServerWorkerError } from './errors.js';
import { eventOf } from './event-record.js';
import type { ControlMessage, ServerEvent, WorkerSettings } from './protocol.js';

/** How long dispose() waits for the worker to end by itself before terminating it. */
const EXIT_GRACE_MS = 2000;

/**
 * The test thread's end of the server's worker (design §4 "Link"): the
 * worker (`dist/server-worker.cjs`, started with `execArgv: []`, so a
 * runner's loaders are not inherited), a control port to it, and the
 * journal of its events (src/internal/journal.ts) with the port its bells
 * come on. Every call that reads state reads the journal synchronously
 * (`drain()`); a bell reads it too, and rings for events this thread acts
 * on by itself (asks), and for any event while something of the server is
 * awaited (`ref()`) — otherwise the worker's events wake nothing here.
 * Worker and events port are unref'd, so a forgotten server never keeps the
 * test runner alive, and ref'd while something is awaited. A worker that
 * fails or exits unasked is kept as `failure`, never thrown from a callback.
 */
export class ServerLink {
  readonly #worker: Worker;
  readonly #control: MessagePort;
  readonly #events: MessagePort;
  readonly #journal: JournalReader;
  /** Shared with the worker: [0] its client connections open now (see `countConnections()`). */
  readonly #gauges = new Int32Array(new SharedArrayBuffer(4));
  readonly #onEvent: (event: ServerEvent) => void;
  readonly #exited: Promise<void>;
  #refs = 0;
  /** Events being applied now (a wait's check, run by one, may read an entry). */
  #applying = 0;
  #stopping = false;
  failure: ServerWorkerError | undefined;
  /** Called once when the worker fails (after `failure` is set). */
  onFailure: () => void = () => {};

  constructor(settings: WorkerSettings, onEvent: (event: ServerEvent) => void) {
    this.#onEvent = onEvent;
    const control = new MessageChannel();
    const events = new MessageChannel();
    this.#control = control.port1;
    this.#events = events.port2;
    const flags = journalFlags();
    this.#journal = new JournalReader(this.#events, flags, (text, bytes) => {
      this.#applying++;
      try {
        this.#onEvent(eventOf(text, bytes));
      } finally {
        this.#applying--;
      }
    });
    this.#worker = new Worker(packageFile(join('dist', 'server-worker.cjs')), {
      name: 'shimkit mock server',
      workerData: {
        settings,
        control: control.port2,
        events: events.port1,
        journal: flags,
        gauges: this.#gauges.buffer,
      },
      transferList: [control.port2, events.port1],
      execArgv: [],
      // The worker never prints (its output would wait for this thread's loop,
      // which may be blocked). Not `stdout: true`: those streams keep an
      // internal port ref'd, and a forgotten server would keep Node alive.
    });
    // A message this thread cannot take apart is lost: the log is no longer exact, so say so.
    this.#events.on('messageerror', (error) =>
      this.#fail(
        new ServerWorkerError(
          `A message from the mock server's worker thread could not be read on the test's thread (${error instanceof Error ? error.message : String(error)}): its log and records are no longer exact. dispose() the server (it still cleans up).`,
          { cause: error },
        ),
      ),
    );
    this.#worker.on('error', (error) =>
      this.#fail(
        new ServerWorkerError(
          `The mock server's worker thread failed: ${error instanceof Error ? error.message : String(error)}. It answers no more requests; dispose() the server (it still cleans up).`,
          { cause: error },
        ),
      ),
    );
    this.#exited = new Promise<void>((resolve) => {
      this.#worker.once('exit', (code) => {
        // What the worker posted before it exited comes first: a listen error
        // is posted just before the worker's loop empties, and its 'exit' can
        // reach this thread before the message does.
        this.drain();
        if (!this.#stopping) {
          this.#fail(
            new ServerWorkerError(
              `The mock server's worker thread exited unasked (code ${code}). It answers no more requests; dispose() the server (it still cleans up).`,
            ),
          );
        }
        resolve();
      });
    });
    this.#apply(false);
  }

  post(message: ControlMessage): void {
    this.#control.postMessage(message);
  }

  /** Apply every event the worker posted so far, now. */
  drain(): void {
    this.#journal.read();
  }

  /** drain(), unless events are being applied already (then the entry read is as of that event). */
  sync(): void {
    if (this.#applying === 0) this.#journal.read();
  }

  /** The client connections the worker has open now, read from shared memory (no message, no wait). */
  openConnections(): number {
    return Atomics.load(this.#gauges, 0);
  }

  /** Keep Node alive until the returned function is called (idempotent); holds nest. */
  ref(): () => void {
    if (this.#refs++ === 0) this.#apply(true);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      if (--this.#refs === 0) this.#apply(false);
    };
  }

  /** dispose(): wait for the worker to end (it was asked to), terminate it after EXIT_GRACE_MS. */
  async stop(): Promise<void> {
    this.#stopping = true;
    const release = this.ref();
    let timer: NodeJS.Timeout | undefined;
    try {
      const late = new Promise<'late'>((resolve) => {
        timer = setTimeout(() => resolve('late'), EXIT_GRACE_MS);
      });
      if ((await Promise.race([this.#exited, late])) === 'late') {
        await this.#worker.terminate();
        await this.#exited;
      }
    } finally {
      clearTimeout(timer);
      this.drain();
      this.#control.close();
      this.#journal.close();
      release();
    }
  }

  #fail(error: ServerWorkerError): void {
    if (this.failure || this.#stopping) return;
    this.failure = error;
    this.onFailure();
  }

  #apply(ref: boolean): void {
    if (ref) {
      this.#worker.ref();
      this.#events.ref();
    } else {
      this.#worker.unref();
      this.#events.unref();
    }
    this.#journal.watch(ref);
  }
}
