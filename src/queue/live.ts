import { readlinkSync } from 'node:fs';
import { sep } from 'node:path';

/**
 * The live channel (requirement MB-16): how a call asks the test process
 * about itself, through files of its generation, so a call loads no socket
 * module (`net` alone costs a call ~8 ms under --jitless).
 *
 *   <gen>/live.json          {"handler":true,"holds":false,"pid":123}: the test process (pid) listens
 *   <gen>/live/<seq>.call    a call's question: argv, cwd, what it claimed
 *   <gen>/live/<seq>.answer  the test process's answer (written whole: temp + rename)
 *
 * A call asks when a hold is set (a hold may catch any call), or when it has
 * no queued response and a handler is set (a matching queued response wins).
 */
export const livePath = (genDir: string) => `${genDir}${sep}live.json`;
export const liveDir = (genDir: string) => `${genDir}${sep}live`;
export const liveCallPath = (genDir: string, seq: number) => `${genDir}${sep}live${sep}${seq}.call`;
export const liveAnswerPath = (genDir: string, seq: number) =>
  `${genDir}${sep}live${sep}${seq}.answer`;

/** `live.json`. */
export interface LiveState {
  handler: boolean;
  holds: boolean;
  /** The test process that answers: a call it holds ends once it is gone. */
  pid?: number;
  /** Its pid namespace (Linux): a call in another one (unshare, a container) cannot see that pid. */
  pidns?: string;
}

let ownPidNamespace: string | null | undefined;

/** This process's pid namespace (`pid:[4026531836]`), or undefined where there is no /proc. */
export function pidNamespace(): string | undefined {
  if (ownPidNamespace === undefined) {
    try {
      ownPidNamespace = readlinkSync('/proc/self/ns/pid');
    } catch {
      ownPidNamespace = null;
    }
  }
  return ownPidNamespace ?? undefined;
}

/** `<seq>.call`. */
export interface LiveCall {
  seq: number;
  argv: string[];
  cwd: string;
  env: Record<string, string>;
  /** What the call claimed from the queue (`source: 'none'`: nothing). */
  source: string;
  response?: number;
}

/** `<seq>.answer`: serve what was claimed, this response, nothing, or fail. */
export type LiveAnswer =
  | { use: 'claimed' }
  | { response: Record<string, unknown> }
  | { none: true }
  | { error: string };
