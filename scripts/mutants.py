#!/usr/bin/python3
"""mutants.py - every promise's test must fail when the code behind it breaks.

`make mutants` (or scripts/mutants.py [NAME...]) reads the mutants of
tests/mutants.txt, each a deliberate break of the library tied to one promise
of tests/README.md's index, and for each: applies it to a scratch copy of the
tree (exactly one occurrence of its line must match), rebuilds incrementally,
runs the test the index names for that promise (suite:case), and prints
"caught" (the test failed or hung) or "MISSED".  Exit status 1 if any mutant was
missed, did not apply, or if a test failed on the unmutated tree (a test that
fails anyway proves nothing).

tests/mutants.txt holds blocks: a line "mutant NAME PROMISE FILE", then the
consecutive lines to find ("- ", leading blanks ignored), then the lines to
put in their place ("+ ").  `scripts/mutants.py --list` only checks that each
applies.
"""
import ctypes
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# A mutated test that runs 3x as long as the unmutated one, plus a minute, is
# taken as hung (caught): a break that makes a bounded wait endless.
HUNG_FACTOR, HUNG_SLACK_S = 3, 60


IPC_RMID = 0
SHM_DEST = 0o1000


def sysv_segments():
    """shmid -> (creator pid, attaches, marked for removal), from the kernel's
    table (this IPC namespace)."""
    segs = {}
    try:
        with open("/proc/sysvipc/shm") as f:
            next(f)
            for line in f:
                w = line.split()
                segs[int(w[1])] = (int(w[4]), int(w[6]), int(w[2], 8) & SHM_DEST != 0)
    except OSError:
        pass
    return segs


def dev_shm_files():
    """(name, inode) of every file in /dev/shm."""
    try:
        with os.scandir("/dev/shm") as d:
            return {(e.name, e.inode()) for e in d if e.is_file(follow_symlinks=False)}
    except OSError:
        return set()


def segments():
    """What a run may leave: the System V ids and the /dev/shm files."""
    return set(sysv_segments()), dev_shm_files()


def alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    with open("/proc/%d/stat" % pid) as f:  # a zombie is gone
        return f.read().rpartition(")")[2].split()[:1] not in (["Z"], ["X"])


def dev_shm_in_use():
    """Inodes of /dev/shm files that some process maps or holds open."""
    used = set()
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open("/proc/%s/maps" % pid) as f:
                for line in f:
                    w = line.split(None, 5)
                    if len(w) == 6 and w[5].startswith("/dev/shm/"):
                        used.add(int(w[4]))
            for fd in os.listdir("/proc/%s/fd" % pid):
                link = os.readlink("/proc/%s/fd/%s" % (pid, fd))
                if link.startswith("/dev/shm/"):
                    used.add(os.stat("/proc/%s/fd/%s" % (pid, fd)).st_ino)
        except OSError:
            continue  # gone meanwhile, or not ours to read
    return used


def remove_new(before):
    """Removes the segments that appeared since `before` (segments()) and that
    nobody uses; returns how many."""
    ids, files = before
    libc = ctypes.CDLL(None, use_errno=True)
    n = 0
    for shmid, (cpid, nattch, dest) in sysv_segments().items():
        if shmid not in ids and not dest and nattch == 0 and not alive(cpid):
            n += libc.shmctl(shmid, IPC_RMID, None) == 0
    used = dev_shm_in_use()
    for name, ino in dev_shm_files() - files:
        if ino not in used:
            try:
                os.unlink(os.path.join("/dev/shm", name))
                n += 1
            except OSError:
                pass
    return n


def read_index():
    """Promise id -> (suite, case) from tests/README.md's index table."""
    index = {}
    row = re.compile(r"^\|\s*`([a-z0-9_-]+)`\s*\|.*\|\s*`((?:check|python)_[a-z0-9_]+):([a-z0-9_]+)`\s*\|\s*$")
    with open(os.path.join(TOP, "tests", "README.md")) as f:
        for line in f:
            m = row.match(line)
            if m:
                index[m.group(1)] = (m.group(2), m.group(3))
    return index


def read_mutants():
    mutants = []
    with open(os.path.join(TOP, "tests", "mutants.txt")) as f:
        for line in f:
            line = line.rstrip("\n")
            if line.startswith("mutant "):
                word, name, promise, path = line.split()
                mutants.append([name, promise, path, [], []])
            elif line.startswith("- ") and mutants:
                mutants[-1][3].append(line[2:].strip())
            elif line.startswith("+ ") and mutants:
                mutants[-1][4].append(line[2:].rstrip())  # its blanks: indentation
            elif line.strip() and not line.startswith("#"):
                sys.exit("tests/mutants.txt: cannot read %r" % line)
    for m in mutants:
        if not m[3] or not m[4]:
            sys.exit("tests/mutants.txt: mutant %s needs - and + lines" % m[0])
    return mutants


def apply(tree, path, old, new):
    """Put the lines `new` in place of the one run of lines `old` (leading blanks
    ignored), each indented as the first of `old` was, plus its own leading
    blanks (Python's blocks); return the original text, or None if `old` is
    not there once."""
    full = os.path.join(tree, path)
    with open(full) as f:
        text = f.read()
    pattern = re.compile("^([ \t]*)" + "\n[ \t]*".join(re.escape(l) for l in old), re.M)
    found = pattern.findall(text)
    if len(found) != 1:
        return None
    with open(full, "w") as f:
        f.write(pattern.sub(lambda m: "\n".join(m.group(1) + l for l in new), text))
    return text


def build(tree, suite):
    targets = ["all"] + ([] if suite.startswith("python_") else ["build/tests/" + suite])
    targets += ["build/bin/shmamrun", "build/bin/shmamstat"]
    targets += ["build/tests/" + p[:-2] for p in os.listdir(os.path.join(tree, "tests")) if p.startswith("prog_") and p.endswith(".c")]
    r = subprocess.run(["make", "-s", "-j2", "--no-print-directory"] + targets, cwd=tree, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    return r.returncode == 0, r.stderr


def run(tree, suite, case, timeout_s=None):
    """(passed, why, seconds, left): passed is None if no test has that name;
    left counts the segments the run left, now removed (remove_new)."""
    before = segments()
    passed, why, took = run_test(tree, suite, case, timeout_s)
    return passed, why, took, remove_new(before)


def session_members(sid):
    """Live pids of session sid, from /proc/PID/stat (its fields after the
    command's closing parenthesis: state, ppid, pgrp, session).  A zombie is
    not live: it waits only for its parent to reap it."""
    pids = []
    for d in os.listdir("/proc"):
        try:
            with open("/proc/%s/stat" % d) as f:
                w = f.read().rsplit(")", 1)[1].split()
            if int(w[3]) == sid and w[0] != "Z":
                pids.append(int(d))
        except (OSError, ValueError, IndexError):
            pass
    return pids


def kill_session(sid):
    """SIGKILL every process of session sid until none is left.  Not killpg:
    Check's forked test makes a process group of its own (setpgid), and a hung
    one keeps the output pipe open, so communicate() would wait for good."""
    while True:
        pids = session_members(sid)
        if not pids:
            return
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        time.sleep(0.05)


def test_argv(tree, suite, case):
    """The command running one test: a Check suite's, or python_X:test_Y for
    the Python package's python/tests/test_X.py::test_Y (every parameter)."""
    if not suite.startswith("python_"):
        return [os.path.join(tree, "build", "tests", suite)]
    path = "python/tests/test_%s.py" % suite[len("python_"):]
    return ["/usr/bin/python3", "-m", "pytest", "-q", "-p", "no:cacheprovider", path, "-k", case]


def run_test(tree, suite, case, timeout_s):
    """(passed, why, seconds) of one test, run in a session of its own, killed
    whole if it hangs."""
    env = dict(os.environ, SHMAM_TEST=case, SHMAM_BUILD=os.path.join(tree, "build"),
               SHMAM_LIBRARY=os.path.join(tree, "build", "lib", "libshmam.so.1"))
    t0 = time.time()
    p = subprocess.Popen(test_argv(tree, suite, case), cwd=tree, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        out, _ = p.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        kill_session(p.pid)
        p.communicate()
        return False, "hung (over %.0f s)" % timeout_s, time.time() - t0
    summary = [l for l in out.splitlines() if "Checks:" in l or " passed" in l or " failed" in l]
    if (summary and " Checks: 0," in summary[-1]) or (suite.startswith("python_") and p.returncode == 5):
        return None, "no test ran under that name", 0
    return p.returncode == 0, (summary[-1] if summary else out[-300:]), time.time() - t0


def check_list(index, mutants):
    """--list: each mutant applies once and names a promise of the index."""
    bad = 0
    for name, promise, path, old, new in mutants:
        with open(os.path.join(TOP, path)) as f:
            text = f.read()
        n = len(re.findall("^[ \t]*" + "\n[ \t]*".join(re.escape(l) for l in old), text, re.M))
        test = "%s:%s" % index[promise] if promise in index else "NO TEST"
        ok = n == 1 and promise in index
        bad += not ok
        print("%-28s %-26s %-48s %s" % (name, promise, test, "" if ok else "matches %d times" % n))
    print("mutants: %d listed, %d promises, %d bad" % (len(mutants), len({m[1] for m in mutants}), bad))
    return 1 if bad else 0


def main(argv):
    index, mutants = read_index(), read_mutants()
    if argv[:1] == ["--list"]:
        return check_list(index, mutants)
    if argv:
        mutants = [m for m in mutants if m[0] in argv]
    start = segments()
    tree = tempfile.mkdtemp(prefix="shmam-mutants.")
    shutil.copytree(TOP, tree, dirs_exist_ok=True, ignore=shutil.ignore_patterns(".git", "build", "build-*", "results"))
    bad = 0
    baseline = {}
    print("mutants: scratch tree %s, %d mutants" % (tree, len(mutants)))
    for name, promise, path, old, new in mutants:
        if promise not in index:
            print("%-28s NO TEST: promise %s is not in tests/README.md's index" % (name, promise))
            bad += 1
            continue
        suite, case = index[promise]
        if (suite, case) not in baseline:
            ok, err = build(tree, suite)
            baseline[(suite, case)] = run(tree, suite, case) if ok else (False, err[-300:], 0, 0)
        passed, why, took, _ = baseline[(suite, case)]
        if not passed:
            print("%-28s CANNOT JUDGE: %s:%s fails unmutated (%s)" % (name, suite, case, why))
            bad += 1
            continue
        text = apply(tree, path, old, new)
        if text is None:
            print("%-28s DOES NOT APPLY: %r is not once in %s" % (name, old, path))
            bad += 1
            continue
        t0 = time.time()
        ok, err = build(tree, suite)
        limit = HUNG_FACTOR * took + HUNG_SLACK_S
        passed, why, _, left = run(tree, suite, case, limit) if ok else (False, "does not build", 0, 0)
        with open(os.path.join(tree, path), "w") as f:
            f.write(text)
        verdict = "caught" if passed is False else "MISSED"
        bad += verdict != "caught"
        note = (why if verdict != "caught" else "") + (" (%d segments left, removed)" % left if left else "")
        print("%-28s %-7s %-9s %s:%s (%.0f s) %s" % (name, verdict, promise, suite, case, time.time() - t0, note))
        sys.stdout.flush()
    build(tree, "check_abi")  # leave the scratch tree as it was, then remove it
    shutil.rmtree(tree, ignore_errors=True)
    left = remove_new(start)  # a run's that were still in use just after it
    if left:
        print("mutants: %d more segment(s) left by the runs, removed" % left)
    print("mutants: %d of %d caught" % (len(mutants) - bad, len(mutants)))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
