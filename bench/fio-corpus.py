#!/usr/bin/env python3
"""The corpus of real fio job files (tests/fio-corpus/SOURCES.tsv) through fsarena.

  python3 bench/fio-corpus.py fetch OUT   # the whole corpus into OUT (needs the network)
  python3 bench/fio-corpus.py count [DIR] [--record]  # unchanged, with --fio-lenient, refused
  python3 bench/fio-corpus.py compare OUT [N]  # five of them beside fio 3.x (root)
  python3 bench/fio-corpus.py reasons ERR  # the reasons of one `plan check` refusal

SOURCES.tsv names each file: where it comes from (repository, path, commit, licence),
whether it is kept here (`here`: a licence that lets us) or fetched from its commit
(`fetch`), whether it is counted (not: an include of other files, a shell template whose
$variables a script fills), the kind of target it is written for, the environment its
harness sets for fio's ${VAR}s (`env`) and the fio options it gives on the command line
(`set`, `;`-separated; here `--fio-set`). Files taken out of a script or a page are the
job file's text alone; `sha256` checks that a fetched copy is the one counted.

count checks each counted file as a plan (`fsarena plan check`, nothing runs) on a
directory target: `unchanged` when accepted as it is, `lenient` with --fio-lenient,
else `refused` with its reasons; then the tallies, for all files and for the files
written for a file or a directory (the corpus's goal). DIR defaults to tests/fio-corpus
(the files kept here); `fetch` first for all of them. --record writes each outcome into
SOURCES.tsv's `outcome` column, which tests/fio_corpus.rs holds the files kept here to.
"""
import csv, hashlib, os, re, subprocess, sys, tempfile, urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.join(HERE, "..", "tests", "fio-corpus")
BIN = os.environ.get("FSARENA", os.path.join(HERE, "..", "target", "release", "fsarena"))


def rows():
    return list(csv.DictReader(open(os.path.join(CORPUS, "SOURCES.tsv")), delimiter="\t"))


def fetch(out):
    for r in rows():
        dst = os.path.join(out, r["file"])
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        if r["kept"] == "here":
            data = open(os.path.join(CORPUS, r["file"]), "rb").read()
        else:
            raw = f"https://raw.githubusercontent.com/{r['origin']}/{r['commit']}/{r['path']}"
            data = urllib.request.urlopen(raw, timeout=60).read()
            if hashlib.sha256(data).hexdigest() != r["sha256"]:
                data = heredoc(data, r["sha256"])
        if hashlib.sha256(data).hexdigest() != r["sha256"]:
            print(f"differs from the corpus: {r['file']} ({r['url']})", file=sys.stderr)
        open(dst, "wb").write(data)


def heredoc(script, sha):
    """The here-document of `script` whose text has the hash `sha` (a job file a test
    script writes), else the script."""
    lines = script.decode(errors="replace").splitlines(keepends=True)
    for i, l in enumerate(lines):
        m = re.search(r"<<-?\s*['\"]?(\w+)['\"]?", l)
        if not m:
            continue
        body = []
        for k in lines[i + 1:]:
            if k.strip() == m.group(1):
                break
            body.append(k.lstrip("\t") if "<<-" in l else k)
        data = "".join(body).encode()
        if hashlib.sha256(data).hexdigest() == sha:
            return data
    return script


def reasons(err):
    kinds = set()
    for line in err.splitlines():
        if not line.startswith("  ") or "(--fio-lenient:" in line:
            continue
        if "a device is not a file" in line: kinds.add("a device as filename")
        elif "run at once on one file" in line: kinds.add("unlike jobs on one file")
        elif "ramps for another time" in line: kinds.add("unlike ramps in one group")
        elif "until the filesystem is full" in line: kinds.add("fill_device (until the filesystem is full)")
        elif "no trim" in line: kinds.add("trim")
        elif re.search(r"ioengine=\S*: fsarena's job engine has no", line): kinds.add("an engine for other targets")
        elif "offset modifier" in line: kinds.add("rw=...:N offsets")
        elif "share of an existing file" in line or "no size=" in line: kinds.add("no size of its own (size=N%, none)")
        elif "is not a number" in line or "is not 0 or 1" in line or "is not a whole number" in line: kinds.add("a ${VAR} its harness fills")
        else: kinds.add("other: " + re.sub(r"^\s*\S+: ", "", line.strip())[:70])
    return sorted(kinds)


def count(d, record=False):
    w = tempfile.mkdtemp()
    os.mkdir(os.path.join(w, "d"))
    def check(r, lenient, cache, seed):
        sets = [s for s in r["set"].split(";") if s]
        plan = (f'[defaults]\nsync = "none"\ncache = "{cache}"\nseed = {seed}\n[[target]]\ndir = "{w}/d"\n'
                f'[[workload]]\nfio = "{os.path.abspath(os.path.join(d, r["file"]))}"\n'
                f'lenient = {"true" if lenient else "false"}\nset = {sets!r}\n'.replace("'", '"'))
        open(os.path.join(w, "p.toml"), "w").write(plan)
        env = dict(os.environ, COLUMNS="100000")
        env.update(v.split("=", 1) for v in r["env"].split())
        p = subprocess.run([BIN, "plan", "check", os.path.join(w, "p.toml")], env=env,
                           capture_output=True, text=True)
        return p.returncode == 0, p.stderr
    def outcome(r, lenient):
        # The policies the file asks for, as `run --fio` takes them from it.
        ok, err = check(r, lenient, "cold", 42)
        m = re.search(r'asks for cache = "(\w+)", sync = "none" and seed = (\d+)', err)
        if not ok and m:
            ok, err = check(r, lenient, m.group(1), m.group(2))
        return ok, err
    tally, outcomes = {}, {}
    for r in rows():
        if r["counted"] != "yes" or not os.path.exists(os.path.join(d, r["file"])):
            continue
        ok, strict = outcome(r, False)
        if ok:
            kind, why = "unchanged", []
        else:
            ok, err = outcome(r, True)
            kind = "lenient" if ok else "refused"
            why = sorted({m.group(1) for m in re.finditer(r"^  \S+: (\S+?):", strict, re.M)}) if ok else reasons(err)
        outcomes[r["file"]] = kind
        print(f"{kind:9} {r['target']:9} {r['file']}" + (f": {'; '.join(why)}" if why else ""))
        for scope in ("all", "file" if r["target"] in ("file", "directory") else None):
            if scope:
                t = tally.setdefault(scope, {"unchanged": 0, "lenient": 0, "refused": 0, "why": {}})
                t[kind] += 1
                if kind == "refused":
                    for k in why:
                        t["why"][k] = t["why"].get(k, 0) + 1
    if record:
        rs = rows()
        cols = [c for c in rs[0] if c != "outcome"] + ["outcome"]
        with open(os.path.join(CORPUS, "SOURCES.tsv"), "w") as f:
            f.write("\t".join(cols) + "\n")
            for r in rs:
                r["outcome"] = outcomes.get(r["file"], "-")
                f.write("\t".join(r[c] for c in cols) + "\n")
    for scope, name in (("all", "all counted files"), ("file", "written for a file or a directory")):
        t = tally.get(scope)
        if not t:
            continue
        n = t["unchanged"] + t["lenient"] + t["refused"]
        print(f"\n{name}: {n}; unchanged {t['unchanged']}, lenient {t['lenient']}, refused {t['refused']}")
        for k, v in sorted(t["why"].items(), key=lambda kv: -kv[1]):
            print(f"  {v:3} {k}")


# Five files kept here, side by side with fio (bench/fio-examples.sh compare): sizes and
# times lowered for this machine, and what their harness gives fio on its command line.
COMPARE = [
    "googlecloudplatform-perfkitbenchmarker/fio.job|filesize=64m size=16m|",
    "kata-containers-tests/randrw-async.job|blocksize=4K direct=0 iodepth=16 runtime=20 size=32M|",
    "virtuozzo-performance-test-suite/4k7030thread1.fio|size=256m runtime=3|",
    "virtuozzo-performance-test-suite/randread.fio|size=64m runtime=3|",
    "kastenhq-kubestr/kubestr-randrw.fio|size=256m runtime=3 ramp_time=1|",
]


if __name__ == "__main__":
    mode = sys.argv[1] if len(sys.argv) > 1 else ""
    if mode == "fetch" and len(sys.argv) == 3:
        fetch(sys.argv[2])
    elif mode in ("count", "compare") and not os.access(BIN, os.X_OK):
        sys.exit(f"no fsarena at {BIN}: build it (cargo build --release) or set FSARENA")
    elif mode == "compare" and len(sys.argv) in (3, 4):
        env = dict(os.environ, FIO_CASES="\n".join(COMPARE))
        sys.exit(subprocess.call(["bash", os.path.join(HERE, "fio-examples.sh"), "compare",
                                  CORPUS, sys.argv[2]] + sys.argv[3:], env=env))
    elif mode == "reasons" and len(sys.argv) == 3:
        # A refusal's reasons, one a line (bench/fio-examples.sh's tally too).
        print("\n".join(reasons(open(sys.argv[2]).read())))
    elif mode == "count":
        args = [a for a in sys.argv[2:] if a != "--record"]
        count(args[0] if args else CORPUS, "--record" in sys.argv)
    else:
        sys.exit(__doc__)
