// CLI-01: shimkit enqueue processes racing on one mock, calls on the sh fast path
// (the same tests with every call through the runner: writers.stress.test.ts).
import { describeWriters, WRITER_PATHS } from './writers.js';

describeWriters(WRITER_PATHS.sh);
