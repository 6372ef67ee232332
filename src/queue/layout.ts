import { sep } from 'node:path';

/**
 * Where everything lives in a mock's private state dir (0700). One layout,
 * read by the runner in every call and written by the test process.
 *
 *   <state>/state.json          {"generation":"g1","config":{…}}: the live generation and the mock's options
 *   <state>/g1/queue.jsonl      one scripted response per line, 1-based; appended to, never rewritten.
 *                               A line counts once its "\n" is written.
 *   <state>/g1/out/<name>       a large output or file map of a response, kept out of the queue line
 *   <state>/g1/calls/<n>.json   record of call n: one JSON line when it starts, one when it has
 *                               claimed, one when it ends (each appended; later lines win)
 *   <state>/g1/claims/<n>       claim marker of response n: a hard link of the claiming call's record
 *                               (from the sh shim: a file made exclusively, holding {"seq":<call>})
 *   <state>/g1/claims/<n>-<k>   routed generations: slot k of a response with `times` > 1
 *   <state>/g1/routed           exists once a response has `match` or `times` (see route-claim.ts)
 *   <state>/g1/sh/<n>           response n as the sh shim serves it (see sh-fragment.ts); empty when
 *                               only the runner can act it out. Written just before line n.
 *   <state>/g1/sh/r<c>          routed generations: the `match` and `times` of responses 64c-63 … 64c as
 *                               sh tests, a line each (see sh-route.ts), rewritten whole before their lines
 *   <state>/state.sh            the live generation for the sh shim (`shimkit_gen=g1 shimkit_on=1`)
 *   <state>/default.sh          the `default` response, and `fallback.sh` the `onExhausted` one, as sh/<n>
 *   <state>/exact-env           exists once a call's env is recorded or matched (recordEnv, match.env, a spy
 *                               or passthrough, a handle() or hold() that may answer passthrough): the shim then hands the runner the env exactly as the caller
 *                               passed it, before its shell added PWD, SHLVL … (src/runner/env.ts); a fork
 *                               and ~1 ms a call, so only then
 *
 * Every mock instance gets a state dir of its own whose name is never used
 * again (`state/<name>.<id>`), and `reset()` moves to the next generation of
 * it, so a call still running from a disposed or reset mock can never write
 * into a later one. Names starting with "." are temp files that readers ignore.
 */
// Plain concatenation: the state dir is absolute and normalised by the writer,
// and `path.join` costs a tenth of a millisecond the first time a process calls it.
export const generationPath = (stateDir: string, generation: string) =>
  `${stateDir}${sep}${generation}`;
export const statePath = (stateDir: string) => `${stateDir}${sep}state.json`;
export const queuePath = (genDir: string) => `${genDir}${sep}queue.jsonl`;
export const outDir = (genDir: string) => `${genDir}${sep}out`;
export const outPath = (genDir: string, name: string) => `${genDir}${sep}out${sep}${name}`;
export const claimPath = (genDir: string, n: number) => `${genDir}${sep}claims${sep}${n}`;
export const callPath = (genDir: string, n: number) => `${genDir}${sep}calls${sep}${n}.json`;
/** Slot `k` (1-based) of response `n` of a routed generation: slot 1 is `claims/<n>`, slot k `claims/<n>-<k>`. */
export const slotPath = (genDir: string, n: number, k: number) =>
  k === 1 ? claimPath(genDir, n) : `${genDir}${sep}claims${sep}${n}-${k}`;
/** Exists once any response of the generation has `match` or `times` (see route-claim.ts). */
export const routedPath = (genDir: string) => `${genDir}${sep}routed`;
/** Where the sh shim finds response `n` of a generation (see sh-fragment.ts). */
export const fragmentPath = (genDir: string, n: number) => `${genDir}${sep}sh${sep}${n}`;
/** Route chunk `c` of a routed generation: the `match` and `times` of responses 64c-63 … 64c as sh (see sh-route.ts). */
export const routeChunkPath = (genDir: string, c: number) => `${genDir}${sep}sh${sep}r${c}`;
export const shStatePath = (stateDir: string) => `${stateDir}${sep}state.sh`;
export const exactEnvPath = (stateDir: string) => `${stateDir}${sep}exact-env`;
/** The config-level responses as the sh shim serves them: `default` and `fallback`. */
export const extraFragmentPath = (stateDir: string, which: 'default' | 'fallback') =>
  `${stateDir}${sep}${which}.sh`;
/** A claim marker's name in a routed generation: response and slot. */
export const SLOT_PATTERN = /^([1-9][0-9]*)(?:-([1-9][0-9]*))?$/;

/** A generation dir name is `g` followed by a positive integer. */
export const GENERATION_PATTERN = /^g[1-9][0-9]{0,14}$/;
/** A file name in `out/`, as a queue line may refer to it. */
export const OUT_FILE_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,100}$/;
