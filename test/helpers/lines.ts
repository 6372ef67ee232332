import type { ChildProcess } from 'node:child_process';

/** Reads a child's stdout line by line; `next()` waits (with a deadline) for the next line. */
export class Lines {
  readonly all: string[] = [];
  #read = 0;
  #buffer = '';
  #waiters: Array<() => void> = [];
  #closed = false;

  constructor(child: ChildProcess) {
    child.stdout?.setEncoding('utf8');
    child.stdout?.on('data', (text: string) => {
      this.#buffer += text;
      let at = this.#buffer.indexOf('\n');
      while (at !== -1) {
        this.all.push(this.#buffer.slice(0, at));
        this.#buffer = this.#buffer.slice(at + 1);
        at = this.#buffer.indexOf('\n');
      }
      this.#wake();
    });
    child.on('close', () => {
      this.#closed = true;
      this.#wake();
    });
  }

  async next(timeoutMs = 15_000): Promise<string> {
    const deadline = Date.now() + timeoutMs;
    while (this.#read >= this.all.length) {
      if (this.#closed)
        throw new Error(`the process ended; lines so far: ${JSON.stringify(this.all)}`);
      const left = deadline - Date.now();
      if (left <= 0)
        throw new Error(
          `no line within ${timeoutMs} ms; lines so far: ${JSON.stringify(this.all)}`,
        );
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.#waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
    return this.all[this.#read++] as string;
  }

  #wake(): void {
    const waiting = this.#waiters;
    this.#waiters = [];
    for (const w of waiting) w();
  }
}
