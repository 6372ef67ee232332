import { join } from 'node:path';

/**
 * Where everything lives in a mock's private state dir (0700). One layout,
 * read by the runner in every call and written by the test process.
 *
 *   <state>/state.json         {"generation":"g1","config":{…}}: the live generation and the mock's options
 *   <state>/g1/queue.jsonl     one scripted response per line, FIFO, 1-based
 *   <state>/g1/lock            the queue lock: the owner's pid
 *   <state>/g1/cursor          hint "<next call> <next response>", only ever read under the lock
 *   <state>/g1/calls/<n>.json  record of call n
 *   <state>/g1/claims/<n>      claim marker of response n: a hard link of the claiming call's record
 *
 * `reset()` builds the next generation beside the live one and switches
 * `state.json` to it, so a call still in flight finishes inside the old
 * generation. Names starting with "." are temp files that readers ignore.
 */
export const statePath = (stateDir: string) => join(stateDir, 'state.json');
export const queuePath = (genDir: string) => join(genDir, 'queue.jsonl');
export const lockPath = (genDir: string) => join(genDir, 'lock');
export const cursorPath = (genDir: string) => join(genDir, 'cursor');
export const claimsDir = (genDir: string) => join(genDir, 'claims');
export const claimPath = (genDir: string, n: number) => join(genDir, 'claims', String(n));
export const callsDir = (genDir: string) => join(genDir, 'calls');
export const callPath = (genDir: string, n: number) => join(genDir, 'calls', `${n}.json`);

/** A generation dir name is `g` followed by a positive integer. */
export const GENERATION_PATTERN = /^g[1-9][0-9]*$/;
/** A call record file name. */
export const CALL_FILE_PATTERN = /^([1-9][0-9]*)\.json$/;
/** A claim marker file name. */
export const CLAIM_FILE_PATTERN = /^[1-9][0-9]*$/;
