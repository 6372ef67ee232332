#!/usr/bin/env bats
# The release script under test, with git mocked by `shimkit` (README: "From bash, pytest or Go").

setup() {
  MOCKS="$BATS_TEST_TMPDIR/mocks"
  # Two steps, so a failing `shimkit mock` fails the setup (eval "$(…)" alone would
  # run the real git): its exit status is checked before its output is used.
  path=$(shimkit mock git --dir "$MOCKS") || return
  eval "$path"
}

@test "release tags and pushes the current branch" {
  shimkit enqueue "$MOCKS" git --stdout $'main\n'    # git rev-parse --abbrev-ref HEAD
  shimkit enqueue "$MOCKS" git                       # git tag -a v1.2.0 -m ...
  shimkit enqueue "$MOCKS" git                       # git push origin v1.2.0

  run "$BATS_TEST_DIRNAME/../fixtures/release.sh" 1.2.0

  [ "$status" -eq 0 ]
  [ "$output" = "released v1.2.0 from main" ]
  run shimkit calls "$MOCKS" git
  [ "${lines[1]}" = "#2 git tag -a v1.2.0 -m 'release v1.2.0' -> exit 0 (response #2)" ]
  [ "${lines[2]}" = "#3 git push origin v1.2.0 -> exit 0 (response #3)" ]
  shimkit verify "$MOCKS"
}

@test "a rejected push fails the release" {
  shimkit enqueue "$MOCKS" git --stdout $'main\n'
  shimkit enqueue "$MOCKS" git
  shimkit enqueue "$MOCKS" git --match-args 'push origin v1.2.0' \
    --stderr $'! [rejected] v1.2.0 (already exists)\n' --exit 1

  run "$BATS_TEST_DIRNAME/../fixtures/release.sh" 1.2.0

  [ "$status" -eq 1 ]
  [[ "$output" == *"release v1.2.0 failed: push rejected"* ]]
  shimkit verify "$MOCKS"
}

@test "verify fails when the script never pushes" {
  shimkit enqueue "$MOCKS" git --stdout $'main\n'
  shimkit enqueue "$MOCKS" git --match-args 'push origin v9' # never called

  run shimkit verify "$MOCKS"

  [ "$status" -eq 1 ]
  [[ "$output" == *'mock "git": 0 of 2 responses used'* ]]
}
