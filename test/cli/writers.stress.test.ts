// CLI-01: 16 shimkit enqueue processes racing on one mock, and one killed at each
// step, with calls on the sh fast path and with every call through the runner.
import { describeWriters, WRITER_PATHS } from './writers.js';

describeWriters(WRITER_PATHS.sh, 16);
describeWriters(WRITER_PATHS.runner, 16);
