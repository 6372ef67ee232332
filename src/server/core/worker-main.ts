// The mock server's worker thread (bundled as dist/server-worker.cjs): the
// test's thread starts it with the settings and two ports, control (test →
// worker) and events (worker → test). See docs/design/mock-server.md §4.
import { type MessagePort, workerData } from 'node:worker_threads';
import type { WorkerSettings } from '../protocol.js';
import { ServerCore } from './core.js';

const { settings, control, events } = workerData as {
  settings: WorkerSettings;
  control: MessagePort;
  events: MessagePort;
};

void new ServerCore(settings, control, events).start();
