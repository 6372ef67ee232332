import {
  appendFileSync,
  chmodSync,
  existsSync,
  fstatSync,
  ftruncateSync,
  openSync,
  readFileSync,
  statSync,
} from 'node:fs';
import { writeBytes } from '../queue/atomic.js';
import {
  type CallFields,
  type Claim,
  decideClaim,
  RecordedFailure,
  type RoutedClaimer,
} from '../queue/claim.js';
import { errnoCode, ProtocolError } from '../queue/errors.js';
import {
  callPath,
  GENERATION_PATTERN,
  generationPath,
  queuePath,
  routedPath,
  slotPath,
} from '../queue/layout.js';
import { countLines } from '../queue/lines.js';
import { parseRecord, recordLine, recordTimes } from '../queue/records.js';
import { readState, readText } from '../queue/state.js';
import type { ResponseSource, WireResponse } from '../queue/types.js';

/**
 * How far the sh shim got with a call before it handed it over (see
 * shims/posix-fast.sh): `r` its record is published but nothing claimed;
 * `c` claimed; `s0` claimed and the delay slept; `s1` the files written
 * too; `s2` stdout written too; `x<code>` everything but the record's last
 * line, which failed.
 */
export type ResumeStep = 'r' | 'c' | 's0' | 's1' | 's2' | `x${number}`;

const STEP_PATTERN = /^(?:r|c|s[012]|x(?:[0-9]|[1-9][0-9]|1[0-9][0-9]|2[0-4][0-9]|25[0-5]))$/;
const SOURCES: ReadonlySet<string> = new Set(['queue', 'repeat', 'fallback', 'default']);

/**
 * The claim of a call the sh shim started: `spec` is
 * `<generation>/<call>/<step>/<source>/<response>/<slot>` (source and
 * response empty before a claim; slot k of a routed response is
 * `claims/<n>-<k>`, 0 none). The record it published is opened for appending; for step
 * `r` the claim is made here, as the runner makes any.
 */
export function resumeClaim(
  stateDir: string,
  spec: string,
  claimRouted: RoutedClaimer,
): { claim: Claim; step: ResumeStep } {
  const [generation = '', seqText = '', step = '', source = '', responseText = '', slotText = ''] =
    spec.split('/');
  const seq = Number(seqText);
  if (
    !GENERATION_PATTERN.test(generation) ||
    !Number.isSafeInteger(seq) ||
    seq < 1 ||
    !STEP_PATTERN.test(step) ||
    (step !== 'r' && !SOURCES.has(source)) ||
    !/^[0-9]{0,7}$/.test(slotText)
  ) {
    throw new ProtocolError(
      `the sh shim handed over a call as "${spec}", which this runner cannot read`,
      stateDir,
    );
  }
  const genDir = generationPath(stateDir, generation);
  const file = callPath(genDir, seq);
  const fd = openRecord(file);
  try {
    const { config } = readState(stateDir);
    const queueText = readText(queuePath(genDir));
    const total = countLines(queueText);
    const routed = total > 0 && existsSync(routedPath(genDir));
    const bytes = readFileSync(file);
    const parsed = parseRecord(bytes, seq, file, () =>
      recordTimes(fstatSync(fd, { bigint: true })),
    );
    if (!parsed)
      throw new ProtocolError('the sh shim handed over a call whose record is incomplete', file);
    // A line the shell could not finish (a full disk) is cut off, so the next one stands alone.
    const whole = Math.max(bytes.lastIndexOf(0x0a), bytes.lastIndexOf(0)) + 1;
    if (whole < bytes.length) ftruncateSync(fd, whole);
    const { source: _s, response: _r, ...fields } = parsed;
    const queue = { config, genDir, routed, queueText, total };
    let decision: { source: ResponseSource; response?: number };
    if (step === 'r') {
      decision = decideClaim(queue, seq, fields as CallFields, claimRouted);
      writeBytes(fd, Buffer.from(recordLine(decision)));
    } else {
      decision =
        responseText === ''
          ? { source: source as ResponseSource }
          : { source: source as ResponseSource, response: Number(responseText) };
    }
    if (step === 'c') {
      // The shell may have handed over before its claim line, or before
      // writing its claim marker (made, so this call's): both are written now.
      // Slot 0 is a `times: 'always'` response, which has no marker.
      const slot = slotText === '' ? 1 : Number(slotText);
      if (decision.source === 'queue' && slot > 0)
        nameClaim(slotPath(genDir, decision.response as number, slot), seq);
      writeBytes(fd, Buffer.from(recordLine(decision)));
    }
    return {
      claim: { ...queue, record: { ...parsed, ...decision }, fd },
      step: step as ResumeStep,
    };
  } catch (error) {
    throw new RecordedFailure(error, fd);
  }
}

/**
 * The record, open for appending. The shell created it with the caller's
 * umask, which may leave even its owner without write permission (0444):
 * the owner may always add it back. (Were it gone, it would be made 0600.)
 */
function openRecord(file: string): number {
  try {
    return openSync(file, 'a', 0o600);
  } catch (error) {
    if (errnoCode(error) !== 'EACCES') throw error;
    chmodSync(file, statSync(file).mode | 0o200);
    return openSync(file, 'a', 0o600);
  }
}

/** A claim marker the shell made but could not write into names call `seq`. */
function nameClaim(marker: string, seq: number): void {
  if (readFileSync(marker).length === 0)
    appendFileSync(marker, `{"seq":${seq}}\n`, { mode: 0o600 });
}

/**
 * What is left of `response` after step `s0`, `s1` or `s2`: without the
 * files once written, without stdout once written.
 */
export function restOfResponse(response: WireResponse, step: 's0' | 's1' | 's2'): WireResponse {
  if (step === 's0') return response;
  const { writeFiles: _f, writeFilesFile: _ff, ...rest } = response;
  if (step === 's1') return rest;
  const { stdout: _o, stdoutBase64: _b, jsonl: _j, stdoutFile: _of, ...stderrOnly } = rest;
  return stderrOnly;
}
