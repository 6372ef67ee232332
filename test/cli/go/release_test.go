// The release script under test, with git mocked by `shimkit` (README: "From bash, pytest or Go").
package release

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func shimkit(t *testing.T, args ...string) string {
	t.Helper()
	out, err := exec.Command("shimkit", args...).Output()
	if err != nil {
		t.Fatalf("shimkit %v: %v", args, err)
	}
	return string(out)
}

func TestReleaseTagsAndPushes(t *testing.T) {
	mocks := filepath.Join(t.TempDir(), "mocks")
	var mock struct{ Path string }
	if err := json.Unmarshal([]byte(shimkit(t, "mock", "git", "--dir", mocks, "--json")), &mock); err != nil {
		t.Fatal(err)
	}
	shimkit(t, "enqueue", mocks, "git", "--stdout", "main\n")
	shimkit(t, "enqueue", mocks, "git")
	shimkit(t, "enqueue", mocks, "git")

	release := exec.Command("../fixtures/release.sh", "1.2.0")
	release.Env = append(os.Environ(), "PATH="+mock.Path)
	out, err := release.Output()

	if err != nil || string(out) != "released v1.2.0 from main\n" {
		t.Fatalf("release: %v, %q", err, out)
	}
	var calls []struct{ Argv []string }
	if err := json.Unmarshal([]byte(shimkit(t, "calls", mocks, "git", "--json")), &calls); err != nil {
		t.Fatal(err)
	}
	if len(calls) != 3 || !reflect.DeepEqual(calls[2].Argv, []string{"push", "origin", "v1.2.0"}) {
		t.Fatalf("git calls: %+v", calls)
	}
	shimkit(t, "verify", mocks)
}

func TestVerifyFailsOnAnUnusedResponse(t *testing.T) {
	mocks := filepath.Join(t.TempDir(), "mocks")
	shimkit(t, "mock", "git", "--dir", mocks)
	shimkit(t, "enqueue", mocks, "git", "--stdout", "main\n")

	verify := exec.Command("shimkit", "verify", mocks)
	var stderr strings.Builder
	verify.Stderr = &stderr
	err := verify.Run()

	if exit, ok := err.(*exec.ExitError); !ok || exit.ExitCode() != 1 {
		t.Fatalf("verify: %v", err)
	}
	if !strings.Contains(stderr.String(), `mock "git": 0 of 1 responses used`) {
		t.Fatalf("verify said: %s", stderr.String())
	}
}
