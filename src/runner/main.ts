import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { type Claim, claimCall, lineAt } from '../queue/claim.js';
import { ProtocolError } from '../queue/errors.js';
import { MockExitCode } from '../queue/exit-codes.js';
import { formatCommand } from '../queue/format.js';
import { queuePath } from '../queue/layout.js';
import { LockTimeoutError } from '../queue/lock.js';
import { updateCallRecord } from '../queue/records.js';
import { responseProblem } from '../queue/response-schema.js';
import type { WireCallRecord, WireResponse } from '../queue/types.js';
import { rawArgv } from './argv.js';
import { pickEnv } from './env.js';
import { writeAll } from './output.js';
import { readStdin } from './stdin.js';

/**
 * The shim runner: `node runner.cjs <state dir> <args…>`. It claims the next
 * scripted response (see src/queue/claim.ts), records the call, and then acts
 * the response out: delay, files, output, exit code. Diagnostics are one line
 * on stderr starting with "shimkit:".
 */

async function main(argv: string[]): Promise<void> {
  const startedAt = Date.now();
  const [stateDir, ...args] = argv;
  restoreNodeOptions(process.env);
  if (!stateDir) return die('usage: runner.cjs <state dir> [args…] (this file is run by a shim)');

  let claim: Claim;
  try {
    claim = claimCall(
      stateDir,
      (config) => ({
        argv: args,
        argvBase64: rawArgv(args),
        cwd: process.cwd(),
        pid: process.pid,
        ppid: process.ppid,
        startedAt,
        status: 'running',
        env: pickEnv(process.env, config.recordEnv),
      }),
      startedAt,
    );
  } catch (error) {
    return die(
      describeFailure(error),
      error instanceof LockTimeoutError ? MockExitCode.timeout : MockExitCode.broken,
    );
  }

  const { config, genDir, record } = claim;
  const label = `mock "${config.name}" call #${record.seq}`;
  const finish = (status: WireCallRecord['status'], exitCode: number, diagnostic?: string) => {
    if (diagnostic) writeAll(2, Buffer.from(`shimkit: ${diagnostic}\n`));
    Object.assign(record, { status, exitCode, endedAt: Date.now() });
    if (diagnostic) record.diagnostic = diagnostic;
    try {
      updateCallRecord(genDir, record);
    } catch {
      // The mock was reset or disposed meanwhile: this call belongs to no test now.
    }
    process.exit(exitCode);
  };

  let response: WireResponse | undefined;
  try {
    response = responseFor(claim);
  } catch (error) {
    return finish('failed', MockExitCode.broken, describeFailure(error));
  }
  if (!response) {
    const used =
      claim.total === 0
        ? 'no responses were queued'
        : claim.total === 1
          ? 'the only queued response is used'
          : `all ${claim.total} queued responses are used`;
    return finish(
      'unmatched',
      MockExitCode.unmatched,
      `${label} (${formatCommand(config.name, args)}) has no response: ${used} and onExhausted is "fail". Enqueue another response or set onExhausted.`,
    );
  }

  const remaining = startedAt + config.timeoutMs - Date.now();
  const timer = setTimeout(
    () => {
      const why = response.delayMs ? ` (scripted delayMs: ${response.delayMs})` : '';
      finish(
        'timed-out',
        MockExitCode.timeout,
        `${label} timed out after ${config.timeoutMs} ms${why}; raise the mock's timeoutMs or shorten the delay.`,
      );
    },
    Math.max(0, remaining),
  );

  if (config.stdin === 'capture') {
    const captured = await readStdin(config.stdinLimitBytes);
    record.stdinBase64 = captured.data.toString('base64');
    if (captured.truncated) record.stdinTruncated = true;
  }
  if (response.delayMs) await new Promise((done) => setTimeout(done, response.delayMs));
  clearTimeout(timer);

  try {
    for (const [file, content] of Object.entries(response.writeFiles ?? {})) {
      const target = resolve(file);
      mkdirSync(dirname(target), { recursive: true });
      writeFileSync(target, content);
    }
  } catch (error) {
    return finish(
      'failed',
      MockExitCode.broken,
      `${label} could not write a file: ${String(error)}`,
    );
  }
  writeAll(1, outputBytes(response.stdout, response.stdoutBase64, response.jsonl));
  writeAll(2, outputBytes(response.stderr, response.stderrBase64));
  finish('exited', response.exitCode ?? 0);
}

/** The response the claim decided on; undefined when there is none (onExhausted: 'fail'). */
function responseFor(claim: Claim): WireResponse | undefined {
  const { config, record } = claim;
  switch (record.source) {
    case 'queue':
    case 'repeat':
      return parseLine(claim, record.response as number);
    case 'fallback':
      return typeof config.onExhausted === 'object' ? config.onExhausted.response : {};
    case 'default':
      return config.default ?? {};
    default:
      return undefined;
  }
}

function parseLine(claim: Claim, n: number): WireResponse {
  const file = queuePath(claim.genDir);
  let value: unknown;
  try {
    value = JSON.parse(lineAt(claim.queueText, n));
  } catch (cause) {
    throw new ProtocolError(`queue line ${n} is not valid JSON`, file, { cause });
  }
  const problem = responseProblem(value, `queue line ${n}`);
  if (problem) throw new ProtocolError(problem, file);
  return value as WireResponse;
}

function outputBytes(text?: string, base64?: string, jsonl?: unknown[]): Buffer {
  const parts: Buffer[] = [];
  if (text) parts.push(Buffer.from(text));
  if (base64) parts.push(Buffer.from(base64, 'base64'));
  for (const value of jsonl ?? []) parts.push(Buffer.from(`${JSON.stringify(value)}\n`));
  return parts.length === 1 ? (parts[0] as Buffer) : Buffer.concat(parts);
}

/** One line: what went wrong and the file it concerns. */
function describeFailure(error: unknown): string {
  if (error instanceof ProtocolError) return error.message;
  if (error instanceof LockTimeoutError)
    return `${error.message}; raise the mock's timeoutMs if this is expected`;
  const text = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  return `unexpected error in the shim runner (please report it): ${text.replace(/\s*\n\s*/g, ' ')}`;
}

function die(message: string, code: number = MockExitCode.broken): void {
  writeAll(2, Buffer.from(`shimkit: ${message}\n`));
  process.exit(code);
}

/** The shim moves NODE_OPTIONS aside so the runner starts clean; the call sees it again. */
function restoreNodeOptions(env: NodeJS.ProcessEnv): void {
  const saved = env.SHIMKIT_NODE_OPTIONS;
  if (saved === undefined) return;
  delete env.SHIMKIT_NODE_OPTIONS;
  if (saved !== '') env.NODE_OPTIONS = saved;
}

void main(process.argv.slice(2));
