// The leak sanitizer on for the fast suite (LK-06): every test fails on what
// it leaves behind, CI or not, so a leak in shimkit's own tests is found the
// day it is written. The entry itself comes next in setupFiles.
import { sanitize } from '../../src/index.js';

sanitize.configure('fail');
