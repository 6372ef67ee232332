// The mock server's worker thread (bundled as dist/server-worker.cjs): the
// test's thread starts it with the settings, two ports, control (test →
// worker) and events (worker → test: the journal's bells and segments), the
// journal's shared flags, and the shared gauges (open connections). See docs/design/mock-server.md §4.
import { type MessagePort, workerData } from 'node:worker_threads';
import { JournalWriter } from '../../internal/journal.js';
import type { WorkerSettings } from '../protocol.js';
import { ServerCore } from './core.js';

const { settings, control, events, journal, gauges } = workerData as {
  settings: WorkerSettings;
  control: MessagePort;
  events: MessagePort;
  journal: SharedArrayBuffer;
  /** [0]: client connections open, counted here, read by the test's thread. */
  gauges: SharedArrayBuffer;
};

void new ServerCore(settings, control, new JournalWriter(events, journal), gauges).start();
