# The fast path (requirement PERF-07). It speaks the runner's protocol
# (src/queue/claim.ts): the call's record is created exclusively at the first
# free calls/<n>.json, a response is claimed by hard-linking the record as
# claims/<n>, and src/queue/sh-fragment.ts rendered each response as sh/<n>
# (empty: only the runner can act it out). What this script cannot do
# exactly, it hands over: before its record exists as a plain call, after as
# a resumed one (-R<generation>/<call>/<step>/<source>/<response>, see
# src/runner/resume.ts). Only builtins, and ln, mkdir and sleep by path.
shimkit_ln=@@LN@@ shimkit_mkdir=@@MKDIR@@ shimkit_sleeper=@@SLEEP@@
# The first n for which "$1<n>$2" does not exist (src/queue/search.ts).
shimkit_first() {
  shimkit_lo=0 shimkit_k=1
  while [ -e "$1$shimkit_k$2" ]; do shimkit_lo=$shimkit_k shimkit_k=$((shimkit_k * 2)); done
  while [ $((shimkit_k - shimkit_lo)) -gt 1 ]; do
    shimkit_mid=$(((shimkit_lo + shimkit_k) / 2))
    if [ -e "$1$shimkit_mid$2" ]; then shimkit_lo=$shimkit_mid; else shimkit_k=$shimkit_mid; fi
  done
}
# The response for claim number shimkit_n of shimkit_t: its source, number
# and file; false when only the runner can decide (onExhausted 'fail', spy).
shimkit_which() {
  shimkit_r=
  if [ "$shimkit_n" -le "$shimkit_t" ]; then
    shimkit_src=queue shimkit_r=$shimkit_n shimkit_f=$shimkit_d/sh/$shimkit_n
    return 0
  fi
@@EXHAUSTED@@
}
# Whether this script can serve the next call: a plain generation, nobody
# listening live, and the response it would get is static.
shimkit_pick() {
  shimkit_d=$shimkit_state/$shimkit_gen
  [ -d "$shimkit_d/sh" ] && [ -f "$shimkit_d/queue.jsonl" ] && [ ! -e "$shimkit_d/routed" ] &&
    [ ! -e "$shimkit_d/live.json" ] || return 1
  shimkit_first "$shimkit_d/sh/" ''
  shimkit_t=$((shimkit_k - 1))
  shimkit_first "$shimkit_d/claims/" ''
  shimkit_n=$shimkit_k
  shimkit_which && [ -s "$shimkit_f" ]
}
# Hand the call over to the runner; $1 is how far it got, then the call's arguments.
shimkit_resume() {
  shimkit_step=$1
  shift
  exec 9>&-
  shimkit_node "-R$shimkit_gen/$shimkit_q/$shimkit_step/$shimkit_src/$shimkit_r" "$shimkit_state" "$@"
}
# Sleep out a delay; a signal that ends the call ends the sleep too.
shimkit_sleep() {
  trap 'shimkit_stop TERM' TERM
  trap 'shimkit_stop INT' INT
  trap 'shimkit_stop HUP' HUP
  "$shimkit_sleeper" "$1" </dev/null >/dev/null 2>&1 &
  shimkit_z=$!
  wait "$shimkit_z"
  trap - TERM INT HUP
}
shimkit_stop() {
  kill "$shimkit_z" 2>/dev/null
  trap - "$1"
  kill -s "$1" "$$"
}
# A deleted cwd leaves PWD empty or naming nothing; the runner records the path it had.
if command . "$shimkit_state/state.sh" 2>/dev/null && [ "$shimkit_on" = 1 ] &&
  [ "$PWD" -ef . ] && shimkit_pick; then
  # The record: created exclusively (noclobber) at the first free number.
  shimkit_first "$shimkit_d/calls/" .json
  shimkit_q=
  set -C
  while :; do
    if command exec 9>"$shimkit_d/calls/$shimkit_k.json"; then shimkit_q=$shimkit_k; break; fi
    [ -e "$shimkit_d/calls/$shimkit_k.json" ] || break
    shimkit_k=$((shimkit_k + 1))
  done 2>/dev/null
  set +C
  if [ -n "$shimkit_q" ] && {
    printf '{"sh":1,"pid":%s,"ppid":%s,"argc":%s@@ENVC@@,"status":"running"}\n' "$$" "$PPID" "$#" &&
      pwd -P && printf '\0' && { [ "$#" = 0 ] || printf '%s\0' "$@"; }@@ENV@@
  } >&9 2>/dev/null; then
    # The claim: the first free response, or what the call gets when none is left.
    if [ "$shimkit_src" = queue ]; then
      until "$shimkit_ln" "$shimkit_d/calls/$shimkit_q.json" "$shimkit_d/claims/$shimkit_n" 2>/dev/null; do
        [ -e "$shimkit_d/claims/$shimkit_n" ] || shimkit_resume r "$@"
        shimkit_n=$((shimkit_n + 1))
        shimkit_which || shimkit_resume r "$@"
        [ "$shimkit_src" = queue ] || break
      done
    fi
    if [ -n "$shimkit_r" ]; then
      printf '{"source":"%s","response":%s}\n' "$shimkit_src" "$shimkit_r"
    else
      printf '{"source":"%s"}\n' "$shimkit_src"
    fi >&9 2>/dev/null || shimkit_resume c "$@"
    [ ! -e "$shimkit_d/live.json" ] && [ -s "$shimkit_f" ] && command . "$shimkit_f" 2>/dev/null ||
      shimkit_resume c "$@"
    # Act it out: delay, files, stdout, stderr, exit code. A write that fails
    # (a closed pipe, a full disk) is the runner's to report.
    [ -z "$shimkit_delay" ] || shimkit_sleep "$shimkit_delay"
    trap '' PIPE
    shimkit_files 2>/dev/null || shimkit_resume s0 "$@"
    printf "$shimkit_out" 2>/dev/null || shimkit_resume s1 "$@"
    printf "$shimkit_err" >&2 2>/dev/null || shimkit_resume s2 "$@"
    printf '{"status":"exited","exitCode":%s}\n' "$shimkit_code" >&9 2>/dev/null ||
      shimkit_resume "x$shimkit_code" "$@"
    exit "$shimkit_code"
  fi
  # No record (the generation went away, or a full disk): the runner's call.
  [ -z "$shimkit_q" ] || exec 9>&-
fi
