# shimkit's zero-dependency PTY backend (requirement SP-13): runs one program
# on a new pseudo-terminal and relays it. spawnProcess({ pty }) starts it as
#
#   python3 -I -S pty.py
#
# in its own session (Node's `detached`), often before the program is known
# (a helper is kept started for the next PTY spawn, since python's start is
# most of a PTY's cost), and then writes the launch on fd 3:
#
#   COUNT \0 COLS \0 ROWS \0 DRAIN_MS \0 KEEP \0 UMASK \0 CWD \0 FILE \0 ARGC \0
#   ARG... \0 NAME=VALUE... \0
#
# (COUNT fields after the first, every one ended by a NUL; bytes, as execve
# takes them). A helper given no launch within IDLE_S exits. The helper takes
# the terminal as its controlling terminal and forks the program into its own
# process group, so the terminal's foreground group is the helper's: a Ctrl+C
# typed reaches the program as SIGINT, and spawnProcess's group kill reaches
# everything.
#
#   fd 0   bytes typed into the terminal (EOF: nothing more to type)
#   fd 1   everything the program writes to the terminal, byte for byte
#   fd 2   the helper's own errors
#   fd 3   control: the launch, then one command a line: "resize COLS ROWS";
#          the helper writes "spawn-error CODE ERRNO" there if exec failed.
#          Its end (Node went away) hangs the terminal up, unless KEEP.
#
# Nothing is lost at exit: the terminal is read until the kernel says every
# holder of it closed it (EIO), and only then does the helper exit, with the
# program's exit code or by the program's signal. A background process that
# keeps the terminal open is given DRAIN_MS after the program exits; past that
# the terminal is still read while output keeps coming (what the program wrote
# is in the kernel's buffers), up to 1 MiB more and 1 s more (the time spent
# waiting for Node to read not counted). With no other process left in the
# session (Linux: /proc) it waits for EIO: the kernel may hand over the last
# bytes late on a loaded machine; for 5 s at most (a daemon that left the
# session may hold the terminal).
import _signal as signal  # not `signal`: its enum import is half of this helper's start
import errno
import fcntl
import os
import select
import sys
import termios
import time

IDLE_S = 30
QUIET_S = 0.05  # past DRAIN_MS: stop once the terminal is this quiet
LATE_BYTES = 1 << 20  # past DRAIN_MS: read at most this much more
LATE_S = 1.0  # past DRAIN_MS: and for at most this long (not counting waits for Node to read)
ORPHAN_S = 5.0  # the same with no process left in the session (a daemon that setsid'd away may hold it)

# The helper ignores (with a handler, which exec resets) every signal the
# group kill or TestProcess.kill() may send, so that the program alone acts
# on it; not KILL and STOP, which cannot be caught, nor the faults.
NOT_HELD = ('SIGKILL', 'SIGSTOP', 'SIGCHLD', 'SIGCLD', 'SIGSEGV', 'SIGBUS', 'SIGILL', 'SIGFPE',
            'SIGTRAP', 'SIGSYS', 'SIGABRT', 'SIGIOT', 'SIGRTMIN', 'SIGRTMAX')
HELD = sorted({getattr(signal, name) for name in dir(signal)
               if name.startswith('SIG') and not name.startswith('SIG_') and name not in NOT_HELD})


def set_size(fd, cols, rows):
    size = b''.join(n.to_bytes(2, sys.byteorder) for n in (rows, cols, 0, 0))  # struct winsize
    fcntl.ioctl(fd, termios.TIOCSWINSZ, size)


def write_all(fd, data):
    while data:
        try:
            n = os.write(fd, data)
        except BlockingIOError:
            select.select([], [fd], [])
            continue
        data = data[n:]


def obey(master, control):
    """Run the complete control lines in `control`; return the rest."""
    while b'\n' in control:
        line, control = control.split(b'\n', 1)
        words = line.split()
        if len(words) == 3 and words[0] == b'resize':
            set_size(master, int(words[1]), int(words[2]))
    return control


def read_launch():
    """The launch from fd 3, and what came after it (the first control lines)."""
    data = b''
    deadline = time.monotonic() + IDLE_S
    while True:
        head, sep, rest = data.partition(b'\0')
        if sep and head.isdigit() and rest.count(b'\0') >= int(head):
            fields = rest.split(b'\0', int(head))
            return fields[:-1], fields[-1]
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([3], [], [], left)[0]:
            os._exit(0)  # never used
        chunk = os.read(3, 65536)
        if not chunk:
            os._exit(0)  # Node went away before using it
        data += chunk


def clean_signals():
    """Every signal at its default disposition and none blocked, as a login shell starts.

    Node (libuv) starts the helper so, but a helper started otherwise (by a
    shell's background job: SIGINT and SIGQUIT ignored; by a parent that
    blocks SIGCHLD) would hand that on through exec: a shell that cannot see
    SIGCHLD does not reap its killed jobs.
    """
    for sig in range(1, signal.NSIG):
        if sig in (signal.SIGKILL, signal.SIGSTOP):
            continue
        try:
            signal.signal(sig, signal.SIG_DFL)
        except (OSError, ValueError):
            pass  # one the C library keeps for itself (its threads' real-time signals)
    signal.pthread_sigmask(signal.SIG_SETMASK, [])


def run_child(slave, master, failed, launch):
    umask, cwd, file, argv, env = launch
    try:
        signal.set_wakeup_fd(-1)
        clean_signals()  # SIGPIPE and SIGXFSZ were ignored by python, the rest held by main()
        os.umask(umask)
        for fd in (0, 1, 2):
            os.dup2(slave, fd)
        for fd in (slave, master, 3):
            if fd > 2:
                os.close(fd)
        os.chdir(cwd)
        try:
            os.execve(file, argv, env)
        except OSError as error:
            if error.errno != errno.ENOEXEC:
                raise
            # A script without a #! line: run it with sh, as execvp (and so Node's spawn) does.
            os.execve(b'/bin/sh', [b'sh', file] + argv[1:], env)
    except OSError as error:
        code = error.errno or errno.EIO
        os.write(failed, str(code).encode())  # close-on-exec: its end is the exec's success
        os._exit(127 if code == errno.ENOENT else 126)


def held_by_others():
    """Whether a process other than this helper is left in its session, that may hold the terminal open.

    Without one, the terminal's end (EIO) is sure to come once the kernel has
    handed over the program's last bytes, which on a loaded machine can take
    longer than any quiet period: so then only EIO ends the relay. Where
    /proc cannot tell (not Linux), assume there is one.
    """
    me = os.getpid()
    try:
        entries = os.listdir('/proc')
    except OSError:
        return True
    for entry in entries:
        if not entry.isdigit() or int(entry) == me:
            continue
        try:
            with open('/proc/%s/stat' % entry, 'rb') as f:
                fields = f.read().rsplit(b')', 1)[1].split()
        except (OSError, IndexError):
            continue
        if len(fields) > 3 and int(fields[3]) == me and fields[0] not in (b'Z', b'X'):
            return True
    return False


def hang_up(master):
    """What a terminal that goes away does: SIGHUP (and SIGCONT) to the foreground and own group."""
    groups = {os.getpgrp()}
    try:
        groups.add(os.tcgetpgrp(master))
    except OSError:
        pass
    for group in groups:
        for sig in (signal.SIGHUP, signal.SIGCONT):
            try:
                os.killpg(group, sig)
            except OSError:
                pass


def main():
    if os.getsid(0) != os.getpid():
        os.setsid()  # run by hand; from Node it already leads its own session
    signal.pthread_sigmask(signal.SIG_SETMASK, [])  # its SIGCHLD must come through
    # All that needs no launch is done first: a spare helper has it done
    # before it is used.
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSCTTY, 0)
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    for sig in HELD:
        signal.signal(sig, lambda *_: None)
    fd_holder = []

    def pass_on(_sig, _frame):
        # The group kill reached the helper and the program. A program that
        # made its own foreground group (an interactive shell, or its job) is
        # not in that group: it gets what a closed terminal sends, SIGHUP.
        if fd_holder:
            try:
                group = os.tcgetpgrp(fd_holder[0])
                if group > 0 and group != os.getpgrp():
                    os.killpg(group, signal.SIGHUP)
            except OSError:
                pass

    signal.signal(signal.SIGTERM, pass_on)
    signal.signal(signal.SIGHUP, pass_on)

    fields, control = read_launch()
    cols, rows, drain_ms, keep = int(fields[0]), int(fields[1]), int(fields[2]), fields[3] == b'1'
    umask, cwd, file, argc = int(fields[4]), fields[5], fields[6], int(fields[7])
    argv = fields[8:8 + argc]
    env = dict(item.split(b'=', 1) for item in fields[8 + argc:])
    set_size(slave, cols, rows)

    failed_r, failed_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        run_child(slave, master, failed_w, (umask, cwd, file, argv, env))
    os.close(slave)  # only the program's side holds the terminal open now
    os.close(failed_w)
    failure = b''
    while True:
        try:
            chunk = os.read(failed_r, 64)
        except InterruptedError:
            continue
        if not chunk:
            break
        failure += chunk
    os.close(failed_r)
    if failure:
        code = int(failure)
        try:
            os.write(3, b'spawn-error %s %d\n' % (errno.errorcode.get(code, 'EIO').encode(), code))
        except OSError:
            pass
    os.set_blocking(master, False)
    fd_holder.append(master)

    control = obey(master, control)
    typed = bytearray()
    stdin_open = True
    control_open = True
    out_open = True
    tty_open = True
    status = None
    exited_at = 0.0
    late = 0  # bytes read past DRAIN_MS
    late_s = 0.0  # time past DRAIN_MS, not counting waits for Node to read
    last_read = 0.0

    while tty_open or status is None:
        timeout = None
        past_deadline = False
        if status is not None:
            left = drain_ms / 1000 - (time.monotonic() - exited_at)
            past_deadline = left <= 0
            timeout = QUIET_S if past_deadline else left
            if past_deadline and (late_s > ORPHAN_S or (
                    (late > LATE_BYTES or late_s > LATE_S) and held_by_others())):
                break
        readers = [wake_r]
        if tty_open:
            readers.append(master)
        if stdin_open:
            readers.append(0)
        if control_open:
            readers.append(3)
        writers = [master] if typed and tty_open else []
        waited = time.monotonic()
        try:
            readable, writable, _ = select.select(readers, writers, [], timeout)
        except InterruptedError:
            continue
        if past_deadline:
            late_s += time.monotonic() - waited
        quiet = time.monotonic() - last_read >= QUIET_S
        if past_deadline and master not in readable and quiet and held_by_others():
            break  # a background holder had its DRAIN_MS, and the program's output is read
        if wake_r in readable:
            try:
                os.read(wake_r, 512)
            except BlockingIOError:
                pass
            if status is None:
                done, code = os.waitpid(pid, os.WNOHANG)
                if done == pid:
                    status = code
                    exited_at = time.monotonic()
        if master in readable:
            try:
                data = os.read(master, 65536)
            except BlockingIOError:
                data = None
            except OSError as error:
                if error.errno != errno.EIO:
                    raise
                data = b''
            if data == b'':
                tty_open = False
            elif data:
                last_read = time.monotonic()
                if past_deadline:
                    late += len(data)
                if out_open:
                    try:
                        write_all(1, data)
                    except BrokenPipeError:
                        out_open = False  # nobody reads: keep draining so the program never blocks
                    last_read = time.monotonic()  # quiet counts from when Node took it
        if master in writable:
            try:
                n = os.write(master, typed)
                del typed[:n]
            except BlockingIOError:
                pass
            except OSError:
                typed.clear()
        if 0 in readable:
            data = os.read(0, 65536)
            if data:
                typed += data
            else:
                stdin_open = False
        if 3 in readable:
            try:
                data = os.read(3, 4096)
            except OSError:
                data = b''
            if not data:
                control_open = False
                if not keep and status is None:
                    hang_up(master)  # Node went away without closing the program
            control = obey(master, control + data)

    if status is None:
        _, status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        try:
            import resource
            resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        except (ImportError, ValueError, OSError):
            pass
        signal.set_wakeup_fd(-1)
        if sig not in (signal.SIGKILL, signal.SIGSTOP):  # their disposition cannot be set
            signal.signal(sig, signal.SIG_DFL)
            signal.pthread_sigmask(signal.SIG_UNBLOCK, [sig])
        os.kill(os.getpid(), sig)
        os._exit(128 + sig)
    os._exit(os.waitstatus_to_exitcode(status) if hasattr(os, 'waitstatus_to_exitcode')
             else os.WEXITSTATUS(status))


if __name__ == '__main__':
    main()
