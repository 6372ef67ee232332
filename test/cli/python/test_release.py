"""The release script under test, with git mocked by `shimkit` (README: "From bash, pytest or Go").

Runs under pytest, or `python3 -m unittest` where pytest is missing.
"""
import json
import os
import subprocess
import tempfile
import unittest

RELEASE = os.path.join(os.path.dirname(__file__), "..", "fixtures", "release.sh")


def shimkit(*args):
    return subprocess.run(["shimkit", *args], check=True, capture_output=True, text=True).stdout


class ReleaseTest(unittest.TestCase):
    def setUp(self):
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        self.mocks = os.path.join(tmp.name, "mocks")
        mock = json.loads(shimkit("mock", "git", "--dir", self.mocks, "--json"))
        self.env = {**os.environ, "PATH": mock["path"]}

    def test_release_tags_and_pushes_the_current_branch(self):
        shimkit("enqueue", self.mocks, "git", "--stdout", "main\n")
        shimkit("enqueue", self.mocks, "git")
        shimkit("enqueue", self.mocks, "git")

        result = subprocess.run([RELEASE, "1.2.0"], env=self.env, capture_output=True, text=True)

        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(result.stdout, "released v1.2.0 from main\n")
        calls = json.loads(shimkit("calls", self.mocks, "git", "--json"))
        self.assertEqual(
            [call["argv"] for call in calls],
            [
                ["rev-parse", "--abbrev-ref", "HEAD"],
                ["tag", "-a", "v1.2.0", "-m", "release v1.2.0"],
                ["push", "origin", "v1.2.0"],
            ],
        )
        shimkit("verify", self.mocks)

    def test_a_rejected_push_fails_the_release(self):
        shimkit("enqueue", self.mocks, "git", "--stdout", "main\n")
        shimkit("enqueue", self.mocks, "git")
        shimkit("enqueue", self.mocks, "git", "--json", json.dumps(
            {"match": {"args": ["push", "origin", "v1.2.0"]}, "stderr": "! [rejected]\n", "exitCode": 1}))

        result = subprocess.run([RELEASE, "1.2.0"], env=self.env, capture_output=True, text=True)

        self.assertEqual(result.returncode, 1)
        self.assertIn("release v1.2.0 failed: push rejected", result.stderr)
        shimkit("verify", self.mocks)

    def test_verify_fails_when_a_response_is_never_used(self):
        shimkit("enqueue", self.mocks, "git", "--stdout", "main\n")

        verify = subprocess.run(["shimkit", "verify", self.mocks], capture_output=True, text=True)

        self.assertEqual(verify.returncode, 1)
        self.assertIn('mock "git": 0 of 1 responses used', verify.stderr)


if __name__ == "__main__":
    unittest.main()
