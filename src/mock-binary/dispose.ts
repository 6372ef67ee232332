// The end of a mock binary: what dispose() does before the mock goes (the
// cassette in record mode, the strict report) and the files it removes.
import { tryUnlink } from '../queue/atomic.js';
import { readSnapshot } from '../queue/reader.js';
import { retire } from '../queue/writer.js';
import { asidePath, type ShimFile } from './availability.js';
import { type CallView, notDoneReportOf } from './call-queries.js';
import { writeCassette } from './cassette.js';

/** How a mock ends: where its cassette goes (record mode), and whether it is strict. */
export interface DisposeSettings {
  readonly recordTo: string | undefined;
  readonly strict: boolean;
}

/**
 * Write the cassette (record mode), and for a strict mock say why it is not
 * done (undefined when it is, or when it is not strict). A cassette that
 * cannot be written throws.
 */
export function reportBeforeDispose(view: CallView, settings: DisposeSettings): string | undefined {
  if (settings.recordTo) {
    const { calls } = readSnapshot(view.stateDir, view.records);
    // Nothing recorded (a test that failed before its first call): no cassette, so `auto` records again next time.
    if (calls.some((c) => c.source === 'passthrough'))
      writeCassette(settings.recordTo, view.name, calls);
  }
  if (!settings.strict) return undefined;
  try {
    return notDoneReportOf(view);
  } catch {
    return undefined; // its state is gone already: nothing to report on
  }
}

/**
 * Remove the shim (in place or moved aside) and retire the state dir at once,
 * so nothing a call still running writes can reach a later mock.
 */
export function removeMockFiles(shim: ShimFile, stateDir: string): void {
  tryUnlink(shim.path);
  tryUnlink(asidePath(shim));
  retire(stateDir);
}
