#!/usr/bin/env python3
"""Builds one repository coding task's data from an upstream fix commit: hidden tests (the fix's
versions of its test files), gold.patch (the fix's source diff), fail_to_pass/pass_to_pass from
running test_cmd at the base and with the gold patch (both with the hidden tests)."""
import argparse, json, os, re, shutil, subprocess, sys, time

def sh(cmd, cwd, check=True):
    return subprocess.run(cmd, cwd=cwd, shell=True, check=check, capture_output=True, text=True).stdout

def parse(log, parser):
    res = {}
    if parser == "unity":
        for line in log.splitlines():
            m = re.match(r"^[^:\s]+\.c:\d+:([A-Za-z_]\w*):(PASS|FAIL|IGNORE)", line.strip())
            if m:
                st = {"PASS": "passed", "FAIL": "failed", "IGNORE": "skipped"}[m.group(2)]
                if res.get(m.group(1)) != "failed": res[m.group(1)] = st
    else:
        pending = None
        for line in log.splitlines():
            m = re.match(r"^(\w+) \(([\w.]+)\)(.*)$", line)
            if m:
                tid = m.group(2)
                if not tid.endswith("." + m.group(1)): tid += "." + m.group(1)
                pending, rest = tid, m.group(3)
            elif pending:
                rest = line
            else:
                continue
            m2 = re.search(r"\.\.\. (ok|FAIL|ERROR|skipped.*|expected failure|unexpected success)$", rest)
            if m2:
                w = m2.group(1)
                res[pending] = "passed" if w in ("ok", "expected failure") else ("skipped" if w.startswith("skipped") else "failed")
                pending = None
    return res

def run_tests(work, test_cmd):
    t = time.time()
    p = subprocess.run(["bash", "-c", test_cmd], cwd=work, capture_output=True, text=True, timeout=600,
                       env=dict(os.environ, PYTHONDONTWRITEBYTECODE="1"))
    return p.stdout + p.stderr, time.time() - t

ap = argparse.ArgumentParser()
ap.add_argument("--repo", required=True)
ap.add_argument("--fix", required=True)
ap.add_argument("--id", required=True)
ap.add_argument("--tests", nargs="+", required=True, help="test files changed by the fix")
ap.add_argument("--test-cmd", required=True)
ap.add_argument("--parser", required=True)
ap.add_argument("--out", required=True, help="suite folder (tasks/coding)")
a = ap.parse_args()

fix = sh(f"git rev-parse {a.fix}^{{commit}}", a.repo).strip()
base = sh(f"git rev-parse {fix}^", a.repo).strip()
tree = sh(f"git rev-parse {base}^{{tree}}", a.repo).strip()
work = f"/tmp/gen/{a.id}"
shutil.rmtree(work, ignore_errors=True)
os.makedirs("/tmp/gen", exist_ok=True)
sh(f"git clone -q --shared {a.repo} {work} && git -C {work} checkout -q {base}", "/tmp/gen")
files_dir = os.path.join(a.out, "files", a.id)
os.makedirs(files_dir, exist_ok=True)
hidden = []
for t in a.tests:
    dest = os.path.join(files_dir, os.path.basename(t))
    with open(dest, "w") as f: f.write(sh(f"git show {fix}:{t}", a.repo))
    hidden.append((os.path.relpath(dest, a.out), t))
excl = " ".join(f"':(exclude){t}'" for t in a.tests)
# source files only: the fix's diff outside tests (CHANGELOG/README/docs left out)
gold = sh(f"git diff {base} {fix} -- . {excl} ':(exclude)tests' ':(exclude)test' ':(exclude)*.md' ':(exclude)*.rst' ':(exclude)docs' ':(exclude)CHANGELOG*'", a.repo)
with open(os.path.join(files_dir, "gold.patch"), "w") as f: f.write(gold)

def install_hidden():
    for src, dst in hidden: shutil.copy(os.path.join(a.out, src), os.path.join(work, dst))
install_hidden()
log_b, tb = run_tests(work, a.test_cmd)
rb = parse(log_b, a.parser)
sh("git checkout -q -- . && git clean -qfdx", work)
subprocess.run(["git", "apply"], input=gold, text=True, cwd=work, check=True)
install_hidden()
log_g, tg = run_tests(work, a.test_cmd)
rg = parse(log_g, a.parser)
f2p = sorted(t for t in rg if rg[t] == "passed" and rb.get(t) != "passed")
p2p = sorted(t for t in rg if rg[t] == "passed" and rb.get(t) == "passed")
bad = sorted(t for t in rg if rg[t] != "passed")
open(f"/tmp/gen/{a.id}.base.log", "w").write(log_b); open(f"/tmp/gen/{a.id}.gold.log", "w").write(log_g)
print(json.dumps({"id": a.id, "fix": fix, "base": base, "tree": tree, "f2p": f2p, "p2p_count": len(p2p),
                  "gold_not_passing": bad, "base_s": round(tb, 1), "gold_s": round(tg, 1),
                  "hidden": hidden}, indent=1))
json.dump({"id": a.id, "fix": fix, "base": base, "tree": tree, "f2p": f2p, "p2p": p2p, "hidden": hidden,
           "test_cmd": a.test_cmd, "parser": a.parser, "base_s": tb, "gold_s": tg},
          open(f"/tmp/gen/{a.id}.json", "w"))
