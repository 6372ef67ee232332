# The fast path (requirements PERF-07, PERF-09). It speaks the runner's
# protocol (src/queue/claim.ts, route-claim.ts), with exclusive creation
# (noclobber, O_EXCL) where the runner hard-links: the call's record at the
# first free calls/<n>.json, its claim marker claims/<n> (or a routed
# response's slot claims/<n>-<k>) holding {"seq":<call>}.
# src/queue/sh-fragment.ts rendered each response as sh/<n> (empty: only the
# runner can act it out), sh-route.ts the matches of a routed generation as
# sh/r<c>, and state.sh says how many there are. What this script cannot do
# exactly, it hands over: before its record exists as a plain call, after as
# a resumed one (-R<generation>/<call>/<step>/<source>/<response>/<slot>, see
# src/runner/resume.ts). Only builtins, and mkdir and sleep by path.
shimkit_mkdir=@@MKDIR@@ shimkit_sleeper=@@SLEEP@@ shimkit_mask=
# The first n above $3 (a number known to be taken, or 0) for which "$1<n>$2"
# does not exist: exponential, then binary steps (src/queue/search.ts).
shimkit_first() {
  shimkit_lo=$3 shimkit_up=1
  shimkit_k=$((shimkit_lo + 1))
  while [ -e "$1$shimkit_k$2" ]; do
    shimkit_lo=$shimkit_k shimkit_up=$((shimkit_up * 2))
    shimkit_k=$((shimkit_lo + shimkit_up))
  done
  while [ $((shimkit_k - shimkit_lo)) -gt 1 ]; do
    shimkit_mid=$(((shimkit_lo + shimkit_k) / 2))
    if [ -e "$1$shimkit_mid$2" ]; then shimkit_lo=$shimkit_mid; else shimkit_k=$shimkit_mid; fi
  done
}
# The response for claim number shimkit_n of shimkit_t: its source, number,
# file and claim marker; false when only the runner can decide
# (onExhausted 'fail', spy).
shimkit_which() {
  shimkit_r= shimkit_slot= shimkit_s=1
  if [ "$shimkit_n" -le "$shimkit_t" ]; then
    shimkit_src=queue shimkit_r=$shimkit_n shimkit_f=$shimkit_d/sh/$shimkit_n
    shimkit_slot=$shimkit_d/claims/$shimkit_n
    return 0
  fi
  # Responses being enqueued (their sh/<n> are written before their lines):
  # the runner sees the lines as soon as they are there.
  [ ! -e "$shimkit_d/sh/$((shimkit_t + 1))" ] || return 1
@@EXHAUSTED@@
}
# A routed generation (src/queue/sh-route.ts): the responses whose match
# fits the call ("$@"), as "<n>/<times> ..." in queue order, from the route
# chunks sh/r<c>; false when the shell cannot tell (too many responses, a
# chunk missing or unreadable, a cwd it cannot read).
shimkit_routes() {
  [ "$shimkit_t" -le @@ROUTE_LIMIT@@ ] || return 1
  shimkit_fits= shimkit_cwd= shimkit_bad= shimkit_c=1
  while [ $(((shimkit_c - 1) * 64)) -lt "$shimkit_t" ]; do
    command . "$shimkit_d/sh/r$shimkit_c" || return 1
    shimkit_c=$((shimkit_c + 1))
  done 2>/dev/null
  [ -z "$shimkit_bad" ]
}
# Whether the call's cwd is $1 as the runner sees it: the physical path
# (getcwd), which `cd -P .` puts in PWD without a fork. PWD and OLDPWD are
# put back as they were.
shimkit_in() {
  if [ -z "$shimkit_cwd" ]; then
    shimkit_lp=$PWD shimkit_ox=${OLDPWD+x} shimkit_ov=${OLDPWD-}
    if command cd -P . && [ -n "$PWD" ]; then shimkit_cwd=$PWD; else shimkit_bad=1; fi
    # bash keeps a leading // (POSIX leaves it open); Linux's getcwd never has it.
    case $shimkit_cwd in //*) shimkit_cwd=${shimkit_cwd#/} ;; esac
    PWD=$shimkit_lp
    if [ -n "$shimkit_ox" ]; then OLDPWD=$shimkit_ov; else unset OLDPWD; fi
    [ -z "$shimkit_bad" ] || return 1
  fi
  [ "x$shimkit_cwd" = "x$1" ]
}
# The first free claim of a routed generation, walking shimkit_rest (the
# fitting responses not yet passed) from its first, whose slots up to
# shimkit_held are known to be taken: slot 1 is claims/<n>, slot k
# claims/<n>-<k>; `always` takes none. False when only the runner can
# decide: a response the shell cannot test, or one past shimkit_t.
shimkit_walk() {
  while [ -n "$shimkit_rest" ]; do
    shimkit_e=${shimkit_rest%% *}
    shimkit_n=${shimkit_e%/*} shimkit_m=${shimkit_e#*/}
    [ "$shimkit_m" != '?' ] && [ "$shimkit_n" -le "$shimkit_t" ] || return 1
    shimkit_last=$shimkit_n
    shimkit_src=queue shimkit_r=$shimkit_n shimkit_f=$shimkit_d/sh/$shimkit_n
    shimkit_slot= shimkit_s=0
    [ "$shimkit_m" != a ] || return 0
    if [ "$shimkit_held" = 0 ] && [ ! -e "$shimkit_d/claims/$shimkit_n" ]; then
      shimkit_slot=$shimkit_d/claims/$shimkit_n shimkit_s=1
      return 0
    fi
    if [ "$shimkit_m" -gt 1 ]; then
      shimkit_first "$shimkit_d/claims/$shimkit_n-" '' $((shimkit_held > 1 ? shimkit_held : 1))
      if [ "$shimkit_k" -le "$shimkit_m" ]; then
        shimkit_slot=$shimkit_d/claims/$shimkit_n-$shimkit_k shimkit_s=$shimkit_k
        return 0
      fi
    fi
    shimkit_rest=${shimkit_rest#* } shimkit_held=0
  done
  shimkit_r= shimkit_slot= shimkit_s=1
  [ ! -e "$shimkit_d/sh/$((shimkit_t + 1))" ] || return 1
@@ROUTED_EXHAUSTED@@
}
# The next response to try once shimkit_slot was taken by another call.
shimkit_next() {
  if [ -n "$shimkit_routed" ]; then
    shimkit_held=$shimkit_s
    shimkit_walk
  else
    shimkit_n=$((shimkit_n + 1))
    shimkit_which
  fi
}
# Read the response shimkit_f (sh-fragment.ts), unless it is the one read already.
shimkit_load() {
  [ "x$shimkit_read" = "x$shimkit_f" ] && return
  [ -s "$shimkit_f" ] && command . "$shimkit_f" && shimkit_read=$shimkit_f
}
# Whether this script can serve the next call: nobody listening live, and
# the response it would get is static. Its response is read now, before the
# record: a dispose() or reset() once the call is recorded and claimed then
# cannot take it away (the call acts it out, as one a moment further on).
shimkit_pick() {
  shimkit_d=$shimkit_state/$shimkit_gen
  [ -d "$shimkit_d/sh" ] && [ -f "$shimkit_d/queue.jsonl" ] && [ ! -e "$shimkit_d/live.json" ] ||
    return 1
  shimkit_t=$shimkit_total shimkit_routed=
  if [ -e "$shimkit_d/routed" ]; then
    shimkit_routed=1
    shimkit_routes "$@" || return 1
    shimkit_rest=$shimkit_fits shimkit_held=0 shimkit_last=
    shimkit_walk
  else
    shimkit_first "$shimkit_d/claims/" '' 0
    shimkit_n=$shimkit_k
    shimkit_which
  fi && shimkit_load 2>/dev/null
}
# Hand the call over to the runner, saying how far it got ($1), with the
# caller's stderr back; shimkit_fast then returns.
shimkit_handover() {
  shimkit_resumed=-R$shimkit_gen/$shimkit_q/$1/$shimkit_src/$shimkit_r/$shimkit_s
  set +C
  exec 9>&- 2>&8 8>&-
}
# A write failed. Into a pipe with no reader (the PIPE trap ran, before the
# shell went on), a real command dies of SIGPIPE: the record says so and the
# shell ends by it. Any other failure is handed over at step $1.
shimkit_broken() {
  [ -n "$shimkit_piped" ] || { shimkit_handover "$1"; return; }
  printf '{"status":"exited","signal":"SIGPIPE"}\n' >&9 || { shimkit_handover x141; return; }
  trap - PIPE
  kill -s PIPE "$$"
  exit 141
}
# Whether fd $1 may take a partial write: non-blocking (Linux says so in
# /proc/self/fdinfo), or unknown where there is no such file and more than
# $2 bytes are to go (a pipe takes up to 512 bytes whole, by POSIX). The
# shell cannot tell how much a failed write wrote, so such output is the
# runner's: it retries a full pipe until the deadline.
shimkit_partial() {
  [ "$2" -gt 0 ] || return 1
  [ -r "/proc/self/fdinfo/$1" ] || { [ "$2" -gt 512 ]; return; }
  while read -r shimkit_key shimkit_val; do
    [ "$shimkit_key" = flags: ] && return $(((0$shimkit_val & 04000) == 0))
  done <"/proc/self/fdinfo/$1"
  return 1
}
# The caller's umask, into shimkit_mask: Linux has it on the second line of
# /proc/self/status, read without a fork; elsewhere $(umask) forks.
shimkit_umask() {
  if [ -r /proc/self/status ]; then
    while read -r shimkit_key shimkit_val; do
      [ "$shimkit_key" = Umask: ] && { shimkit_mask=$shimkit_val; return; }
      [ "$shimkit_key" = Name: ] || break
    done </proc/self/status
  fi
  shimkit_mask=$(umask)
}
# Sleep out a delay; a signal that ends the call ends the sleep too.
shimkit_sleep() {
  trap 'shimkit_stop TERM' TERM
  trap 'shimkit_stop INT' INT
  trap 'shimkit_stop HUP' HUP
  "$shimkit_sleeper" "$1" </dev/null >/dev/null 2>&1 8>&- 9>&- &
  shimkit_z=$!
  wait "$shimkit_z"
  trap - TERM INT HUP
}
shimkit_stop() {
  kill "$shimkit_z" 2>/dev/null
  trap - "$1"
  kill -s "$1" "$$"
}
# Serve the call, or return to hand it to the runner (with shimkit_resumed
# set once it has a record). The shell's own messages go nowhere (fd 2) while
# it works; the caller's stderr is fd 8.
shimkit_fast() {
  # (bash imports functions from the env; none may stand in for a builtin.)
  unset -f printf pwd kill wait command test [ read 2>/dev/null
  shimkit_total= shimkit_read=
  command . "$shimkit_state/state.sh" 2>/dev/null && [ "$shimkit_on" = 1 ] &&
    [ -n "$shimkit_total" ] || return
  # A deleted cwd leaves PWD empty or naming nothing; the runner records the path it had.
  [ "$PWD" -ef . ] && shimkit_pick "$@" || return
  # (A caller that closed stderr has no fd 2 to keep: the runner's call.)
  command exec 8>&2 2>/dev/null || return
  # A file size limit then fails a write (EFBIG), handed over, instead of killing the shell.
  trap '' XFSZ
  # The record and the claim marker are 0600 whatever the caller's umask
  # (SEC-01); the caller's is back for the files a response writes and for
  # the runner (the last line of this script).
  shimkit_umask
  umask 077
  # The record: created exclusively (noclobber) at the first free number;
  # each claim has a record, so in a plain generation calls 1 .. n-1 exist.
  shimkit_first "$shimkit_d/calls/" .json $((shimkit_routed ? 0 : shimkit_n - 1))
  shimkit_q=
  set -C
  while :; do
    if command exec 9>"$shimkit_d/calls/$shimkit_k.json"; then shimkit_q=$shimkit_k; break; fi
    [ -e "$shimkit_d/calls/$shimkit_k.json" ] || break
    shimkit_k=$((shimkit_k + 1))
  done
  set +C
  # No record (the generation went away, a full disk): the runner's call.
  [ -n "$shimkit_q" ] || { exec 2>&8 8>&-; return; }
  {
    printf '{"sh":1,"seq":%s,"pid":%s,"ppid":%s,"argc":%s@@ENVC@@,"status":"running"}\n' \
      "$shimkit_q" "$$" "$PPID" "$#" &&
      pwd -P && printf '%s\0' '' "$@"@@ENV@@
  } >&9 || { shimkit_q=; exec 9>&- 2>&8 8>&-; return; }
  # The claim: the first free response (its slot), or what the call gets
  # when none is left. The marker is created exclusively too, and named
  # the call's record through the fd that created it (one open: a dispose()
  # between the two cannot leave it unnamed). Made, it is this call's even
  # if writing into it fails (a full disk): the runner then writes it. (A
  # failed redirection of a group does not end the shell, as one of `:` does.)
  if [ -n "$shimkit_slot" ]; then
    set -C
    while :; do
      shimkit_made=
      { shimkit_made=1; printf '{"seq":%s}\n' "$shimkit_q"; } >"$shimkit_slot" && break
      [ -z "$shimkit_made" ] || { shimkit_handover c; return; }
      [ -e "$shimkit_slot" ] || { shimkit_handover r; return; }
      shimkit_next || { shimkit_handover r; return; }
      [ -n "$shimkit_slot" ] || break
    done
    set +C
  fi
  if [ -n "$shimkit_r" ]; then
    printf '{"source":"%s","response":%s}\n' "$shimkit_src" "$shimkit_r"
  else
    printf '{"source":"%s"}\n' "$shimkit_src"
  fi >&9 || { shimkit_handover c; return; }
  # (A race may have moved the claim to another response: that one is read now.)
  [ ! -e "$shimkit_d/live.json" ] && shimkit_load || { shimkit_handover c; return; }
  umask "$shimkit_mask"
  # Act it out: delay, files, stdout, stderr, exit code. A write into a pipe
  # with no reader ends the call by SIGPIPE (shimkit_piped); any other
  # failure (a full disk) is the runner's to report.
  [ -z "$shimkit_delay" ] || shimkit_sleep "$shimkit_delay"
  shimkit_piped=
  trap 'shimkit_piped=1' PIPE
  shimkit_files || { shimkit_handover s0; return; }
  ! shimkit_partial 1 "$shimkit_outlen" || { shimkit_handover s1; return; }
  printf "$shimkit_out" || { shimkit_broken s1; return; }
  ! shimkit_partial 8 "$shimkit_errlen" || { shimkit_handover s2; return; }
  printf "$shimkit_err" >&8 || { shimkit_broken s2; return; }
  printf '{"status":"exited","exitCode":%s}\n' "$shimkit_code" >&9 ||
    { shimkit_handover "x$shimkit_code"; return; }
  exit "$shimkit_code"
}
shimkit_fast "$@"
[ -z "$shimkit_mask" ] || umask "$shimkit_mask"
