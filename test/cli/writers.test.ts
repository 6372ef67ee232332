// CLI-01: 8 shimkit enqueue processes racing on one mock, calls on the sh fast path
// (16 of them, and every call through the runner too: writers.stress.test.ts).
import { describeWriters, WRITER_PATHS } from './writers.js';

describeWriters(WRITER_PATHS.sh, 8);
