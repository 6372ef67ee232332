// CLI-01: shimkit enqueue processes racing on one mock, every call through the runner.
import { describeWriters, WRITER_PATHS } from './writers.js';

describeWriters(WRITER_PATHS.runner);
